package main

// A reader of the YAML subset the judge's requirements are written in (standard library only):
// a block sequence of mappings with key, operator and values, values a flow sequence ([a, b])
// or a block one; scalars plain, 'single' or "double" quoted. A scalar keeps its text, as
// yaml.v2 keeps it when it decodes into a string field; null (~, null, empty) is a nil pointer,
// or "" in a list of strings. Anything outside the subset reads as no requirements.

import "strings"

func parseRequirements(text string) []Requirement {
	var out []Requirement
	var listKey string // "values" while a block sequence of values is being read
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(line, "- ") || line == "-" {
			out = append(out, Requirement{})
			listKey = ""
			trimmed = strings.TrimSpace(strings.TrimPrefix(line, "-"))
			if trimmed == "" {
				continue
			}
		} else if len(out) == 0 || !strings.HasPrefix(line, " ") {
			return nil
		}
		current := &out[len(out)-1]
		if listKey != "" && strings.HasPrefix(trimmed, "- ") {
			value, _ := scalar(strings.TrimPrefix(trimmed, "- "))
			current.Values = append(current.Values, value)
			continue
		}
		name, value, found := strings.Cut(trimmed, ":")
		if !found {
			return nil
		}
		value = strings.TrimSpace(value)
		listKey = ""
		if name != "values" && (strings.HasPrefix(value, "[") || strings.HasPrefix(value, "{")) {
			return nil // a collection where a string goes: yaml.v2 fails, CLM keeps none
		}
		switch name {
		case "key":
			current.Key = pointer(value)
		case "operator":
			current.Operator = pointer(value)
		case "values":
			if value == "" {
				listKey = name
			} else if strings.HasPrefix(value, "[") && strings.HasSuffix(value, "]") {
				current.Values = flow(value[1 : len(value)-1])
			} else {
				return nil
			}
		}
	}
	return out
}

func pointer(text string) *string {
	value, isNull := scalar(text)
	if isNull {
		return nil
	}
	return &value
}

func flow(inner string) []string {
	values := []string{}
	if strings.TrimSpace(inner) == "" {
		return values
	}
	for _, part := range strings.Split(inner, ",") {
		value, _ := scalar(part)
		values = append(values, value)
	}
	return values
}

func scalar(text string) (string, bool) {
	text = strings.TrimSpace(text)
	if len(text) >= 2 && text[0] == '\'' && text[len(text)-1] == '\'' {
		return strings.ReplaceAll(text[1:len(text)-1], "''", "'"), false
	}
	if len(text) >= 2 && text[0] == '"' && text[len(text)-1] == '"' {
		r := strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n", `\t`, "\t")
		return r.Replace(text[1 : len(text)-1]), false
	}
	switch text {
	case "", "~", "null", "Null", "NULL":
		return "", true
	}
	return text, false
}
