package shape

// Limits bound what a spec may ask for and so how much work Apply does.
// A zero field takes its default from [DefaultLimits]. Limits is a plain
// value; copy it freely.
type Limits struct {
	// MaxPathBytes caps the length of a path in bytes. Default 1024.
	MaxPathBytes int
	// MaxPathSegments caps the number of segments of a path. Default 64.
	MaxPathSegments int
	// MaxKeys caps the number of keys of a pick or omit list. Default 256.
	MaxKeys int
	// MaxKeyBytes caps the length of one pick or omit key. Default 256.
	MaxKeyBytes int
	// MaxMapDepth caps how deeply map specs nest below the top spec
	// ({"map":{"map":{}}} has depth 2). Default 8.
	MaxMapDepth int
	// MaxDefaultBytes caps the JSON text of one default value. A default
	// may be repeated once per array element inside map, so this bounds
	// how much a spec can amplify the result. Default 4096.
	MaxDefaultBytes int
	// MaxSpecBytes caps the JSON text of the whole spec. Default 65536.
	MaxSpecBytes int
}

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxPathBytes:    1024,
		MaxPathSegments: 64,
		MaxKeys:         256,
		MaxKeyBytes:     256,
		MaxMapDepth:     8,
		MaxDefaultBytes: 4096,
		MaxSpecBytes:    64 << 10,
	}
}

// withDefaults fills zero (or negative) fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&l.MaxPathBytes, d.MaxPathBytes)
	fill(&l.MaxPathSegments, d.MaxPathSegments)
	fill(&l.MaxKeys, d.MaxKeys)
	fill(&l.MaxKeyBytes, d.MaxKeyBytes)
	fill(&l.MaxMapDepth, d.MaxMapDepth)
	fill(&l.MaxDefaultBytes, d.MaxDefaultBytes)
	fill(&l.MaxSpecBytes, d.MaxSpecBytes)
	return l
}
