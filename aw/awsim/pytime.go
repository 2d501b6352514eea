package awsim

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Times are kept as Python keeps them in aw-server: microseconds (datetime
// and timedelta resolution), in UTC, within datetime's year range 1..9999.
// Event timestamps are truncated to milliseconds on the way in.

const (
	usPerSecond = int64(1_000_000)
	usPerMilli  = int64(1000)
	// minUS and maxUS bound Python's datetime (0001-01-01 .. 9999-12-31).
	minUS = int64(-62135596800) * usPerSecond
	maxUS = int64(253402300800)*usPerSecond - 1
	// maxDurUS bounds durations. Python allows up to ~8.6e19 µs; int64 stops
	// at 9.2e18 (and a timestamp must still fit beside it), so absurd
	// durations fail a little earlier here (a 500 either way).
	maxDurUS = 8_000_000_000_000 * usPerSecond
)

// errOverflow stands for Python's OverflowError: a 500 in aw-server.
var errOverflow = errors.New("date value out of range")

func inRange(us int64) bool { return us >= minUS && us <= maxUS }

// addUS adds two microsecond quantities, failing like datetime arithmetic
// does when the result leaves datetime's range.
func addUS(t, d int64) (int64, error) {
	s := t + d
	if (d > 0 && s < t) || (d < 0 && s > t) || !inRange(s) {
		return 0, errOverflow
	}
	return s, nil
}

// truncMS is aw-core's timestamp resolution: microseconds floored to ms.
func truncMS(us int64) int64 {
	m := us % usPerMilli
	if m < 0 {
		m += usPerMilli
	}
	return us - m
}

// isoformat is datetime.isoformat() of a UTC instant: no fraction when the
// microseconds are zero, else six digits; always "+00:00".
func isoformat(us int64) string { return isoformatOffset(us, 0) }

// isoformatOffset formats us as isoformat() does for a datetime in a fixed
// offset (minutes east of UTC).
func isoformatOffset(us int64, offMin int) string {
	t := time.UnixMicro(us).UTC().Add(time.Duration(offMin) * time.Minute)
	b := make([]byte, 0, 32)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if f := t.Nanosecond() / 1000; f != 0 {
		b = append(b, '.')
		b = append(b, strconv.Itoa(1_000_000 + f)[1:]...)
	}
	sign := byte('+')
	if offMin < 0 {
		sign, offMin = '-', -offMin
	}
	b = append(b, sign)
	b = append(b, strconv.Itoa(100 + offMin/60)[1:]...)
	b = append(b, ':')
	b = append(b, strconv.Itoa(100 + offMin%60)[1:]...)
	return string(b)
}

// durSeconds is timedelta.total_seconds(): microseconds / 10**6, correctly
// rounded.
func durSeconds(us int64) float64 {
	if us > -(1<<53) && us < 1<<53 {
		return float64(us) / 1e6
	}
	f, _ := new(big.Rat).SetFrac(big.NewInt(us), big.NewInt(usPerSecond)).Float64()
	return f
}

// durFromSeconds is timedelta(seconds=x) for a float: whole seconds exactly,
// the fraction rounded half-even to microseconds. NaN, infinities and
// values beyond the supported range fail (ValueError/OverflowError: 500).
func durFromSeconds(x float64) (int64, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errOverflow
	}
	ip, frac := math.Modf(x)
	if math.Abs(ip) > float64(maxDurUS/usPerSecond) {
		return 0, errOverflow
	}
	return int64(ip)*usPerSecond + int64(math.RoundToEven(frac*1e6)), nil
}

// durFromJSON converts a JSON number (as Event(duration=...) accepts it:
// int, float or bool) to microseconds.
func durFromJSON(v any) (int64, error) {
	switch t := v.(type) {
	case bool:
		if t {
			return usPerSecond, nil
		}
		return 0, nil
	case *big.Int:
		limit := big.NewInt(maxDurUS / usPerSecond)
		if new(big.Int).Abs(t).Cmp(limit) > 0 {
			return 0, errOverflow
		}
		return t.Int64() * usPerSecond, nil
	case float64:
		return durFromSeconds(t)
	}
	return 0, errors.New("couldn't parse duration of invalid type")
}

// pyTime is a parsed timestamp: the UTC instant and the offset it was
// written in (minutes east of UTC).
type pyTime struct {
	us     int64
	offMin int
}

// isoRE is pyiso8601's ISO8601_REGEX (the version aw-core pins) in RE2
// syntax. Go's leftmost-first matching picks the same groups a backtracking
// engine does. Two constructs need care: Python's "$" also matches before a
// final newline (the trailing \n? below), and the month's lookahead (?!$),
// "don't allow YYYYMM", is checked after matching.
var isoRE = regexp.MustCompile(`^(?P<year>[0-9]{4})` +
	`(((-(?P<monthdash>[0-9]{1,2}))|(?P<month>[0-9]{2}))` +
	`(((-(?P<daydash>[0-9]{1,2}))|(?P<day>[0-9]{2}))` +
	`(((?P<separator>[ T])(?P<hour>[0-9]{2})(:?(?P<minute>[0-9]{2}))?` +
	`(:?(?P<second>[0-9]{1,2})([.,](?P<second_fraction>[0-9]+))?)?` +
	`(?P<timezone>Z|((?P<tz_sign>[-+])(?P<tz_hour>[0-9]{2}):?(?P<tz_minute>[0-9]{2})?))?)?))?)?` +
	"\n?$")

var isoGroups = func() map[string]int {
	m := map[string]int{}
	for i, n := range isoRE.SubexpNames() {
		if n != "" {
			m[n] = i
		}
	}
	return m
}()

// errParse is iso8601.ParseError (a 500 from the events endpoints).
var errParse = errors.New("unable to parse date string")

// parseISO is iso8601.parse_date(s) with UTC as the default zone, followed
// by the range checks datetime applies on conversion to UTC.
func parseISO(s string) (pyTime, error) {
	m := isoRE.FindStringSubmatchIndex(s)
	if m == nil {
		return pyTime{}, errParse
	}
	group := func(name string) (string, bool) {
		i := isoGroups[name]
		if m[2*i] < 0 {
			return "", false
		}
		return s[m[2*i]:m[2*i+1]], true
	}
	_, hasMonth := group("month")
	_, hasDay := group("day")
	_, hasDayDash := group("daydash")
	if hasMonth && !hasDay && !hasDayDash {
		return pyTime{}, errParse // the (?!$) lookahead
	}
	num := func(name string, def int) int {
		if g, ok := group(name); ok {
			n, _ := strconv.Atoi(g)
			return n
		}
		return def
	}
	year := num("year", 0)
	month := num("month", num("monthdash", 1))
	day := num("day", num("daydash", 1))
	hour, minute, second := num("hour", 0), num("minute", 0), num("second", 0)
	frac, _ := group("second_fraction")
	micro := fractionMicros(frac)
	if year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 59 || micro > 999999 {
		return pyTime{}, errParse
	}
	off := 0
	if tz, ok := group("timezone"); ok && tz != "Z" {
		off = num("tz_hour", 0)*60 + num("tz_minute", 0)
		if sign, _ := group("tz_sign"); sign == "-" {
			off = -off
		}
		if off <= -24*60 || off >= 24*60 {
			return pyTime{}, errParse
		}
	}
	local := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	us := local.Unix()*usPerSecond + int64(micro) - int64(off)*60*usPerSecond
	if !inRange(us) {
		return pyTime{}, errOverflow
	}
	return pyTime{us: us, offMin: off}, nil
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// fractionMicros is int(Decimal("0."+frac) * Decimal("1000000.0")) under
// Python's default 28-digit decimal context: the product is rounded
// half-even to 28 significant digits before int() truncates it.
func fractionMicros(frac string) int {
	if frac == "" {
		return 0
	}
	sig := strings.TrimLeft(frac, "0")
	zeros := len(frac) - len(sig)
	// The product's coefficient is sig followed by 7 zeros; the context keeps
	// 28 digits, so only digits of sig beyond the 28th are rounded away.
	if keep := 28; len(sig) > keep {
		head, rest := []byte(sig[:keep]), sig[keep:]
		up := rest[0] > '5' || (rest[0] == '5' && (strings.TrimRight(rest[1:], "0") != "" || (head[keep-1]-'0')%2 == 1))
		if up {
			i := keep - 1
			for ; i >= 0 && head[i] == '9'; i-- {
				head[i] = '0'
			}
			if i < 0 {
				head = append([]byte{'1'}, head...)
				zeros--
			} else {
				head[i]++
			}
		}
		sig = string(head)
	}
	if zeros < 0 {
		return 1_000_000 // 0.999...→1.0: datetime rejects it
	}
	digits := strings.Repeat("0", zeros) + sig + "000000"
	n, _ := strconv.Atoi(digits[:6])
	return n
}

// queryArgs is a request's query string as werkzeug parses it: pairs split
// on "&", empty pairs skipped, "+" as space, invalid %-escapes kept
// literally, UTF-8 decoded with replacement. get returns the first value.
type queryArgs []struct{ k, v string }

func parseQueryArgs(raw string) queryArgs {
	var out queryArgs
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		out = append(out, struct{ k, v string }{unquotePlus(k), unquotePlus(v)})
	}
	return out
}

func (q queryArgs) get(k string) (string, bool) {
	for _, p := range q {
		if p.k == k {
			return p.v, true
		}
	}
	return "", false
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func unquotePlus(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b = append(b, hi<<4|lo)
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return replaceInvalidUTF8(b)
}

// replaceInvalidUTF8 decodes b with errors="replace" (one U+FFFD per
// invalid byte).
func replaceInvalidUTF8(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); {
		r, n := rune(b[i]), 1
		if b[i] >= 0x80 {
			r, n = utf8.DecodeRune(b[i:])
		}
		sb.WriteRune(r)
		i += n
	}
	return sb.String()
}

// pyIsSpace is str.isspace() for the characters int() and strip() skip.
func pyIsSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1C, 0x1D, 0x1E, 0x1F, 0x85, 0xA0, 0x1680,
		0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// numStrip is the whitespace int() and float() skip: str.isspace() except
// U+001C..U+001F (CPython only maps non-ASCII spaces to ' ' before parsing).
func numStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return pyIsSpace(r) && (r < 0x1C || r > 0x1F) })
}

// errNotInt is int()'s ValueError (a 500 in aw-server).
var errNotInt = errors.New("invalid literal for int() with base 10")

// pyInt is int(s) for a query argument, limited to what SQLite's LIMIT
// takes (a larger value fails with OverflowError there: also a 500).
func pyInt(s string) (int64, error) {
	s = numStrip(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, errNotInt
	}
	digits := strings.ReplaceAll(s, "_", "")
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, errNotInt
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, errOverflow
	}
	if neg {
		n = -n
	}
	return n, nil
}

// pyFloat is float(s) for a query argument (pulsetime).
func pyFloat(s string) (float64, error) {
	s = numStrip(s)
	t := strings.ToLower(strings.TrimLeft(s, "+-"))
	switch t {
	case "inf", "infinity", "nan":
		f, _ := strconv.ParseFloat(s, 64)
		return f, nil
	}
	if t == "" || strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "_") || strings.HasSuffix(t, "_") ||
		strings.Contains(t, "__") || strings.Contains(t, "_.") || strings.Contains(t, "._") ||
		strings.Contains(t, "_e") || strings.Contains(t, "e_") {
		return 0, errors.New("could not convert string to float")
	}
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == '+' || c == '-' || c == '_') {
			return 0, errors.New("could not convert string to float")
		}
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	return f, nil
}
