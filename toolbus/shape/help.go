package shape

// HelpField describes one key of the output spec, for help texts and
// generated schemas.
type HelpField struct {
	Name    string
	Type    string
	Meaning string
}

// HelpFields returns the keys of the output spec in the order [SpecKeys]
// lists them. Each call returns a fresh slice.
func HelpFields() []HelpField {
	return []HelpField{
		{"path", "string", "selects a value inside the result. " + PathSyntax},
		{"pick", "array of strings", "keeps only these keys of an object, or of each object in an array; keys are literal, and a key the object lacks is simply left out"},
		{"omit", "array of strings", "drops these keys from an object, or from each object in an array"},
		{"map", "object (an output spec)", "applied to each element of an array (elements answering undefined are dropped), or to any other value itself; runs after pick and omit"},
		{"missing", `"error" | "null" | "undefined" | "empty"`, `what to answer when the path is missing and there is no default: an error naming the path (the default), null, no result field, or an empty value ([] with map, {} with pick or omit, else null)`},
		{"default", "any JSON value", "replaces missing data; pick, omit and map then shape it like the data it replaces"},
	}
}
