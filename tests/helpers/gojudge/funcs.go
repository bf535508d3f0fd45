package main

import (
	"encoding/base64"
	"strings"
	"text/template"
)

// funcs is the judge's function map: a few of CLM's functions, written for these tests from
// CLM's documented behaviour (provisioner/template.go), so that cases can shadow and call them.
// A template calling anything else fails to parse, which the tests report as the judge's error.
func funcs() template.FuncMap {
	return template.FuncMap{
		"base64": func(value string) string {
			return base64.StdEncoding.EncodeToString([]byte(value))
		},
		// split: strings.Split, except that an empty string has no parts (a nil slice).
		"split": func(s, sep string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, sep)
		},
	}
}
