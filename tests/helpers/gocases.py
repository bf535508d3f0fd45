"""The edge-case table: small Go templates over CLM-shaped data, each rendered by the Go judge
(tests/helpers/gojudge) and by clmgit both ways (`gotable`). Categories: Go's fmt (`print`,
`printf`, `println`, plain output of every type CLM's data holds), names the converter generates,
config items named like Python attributes, CLM's `NodePool.Taints` and `KarpenterRequirements`, nil
slices, comparisons, `range`, `index`, `len`.

A case is (name, template) over `BASE`, or (name, template, pool config items) where the node
pool's items matter. `UNMATCHED` names the cases where Go prints something clmgit does not
copy (an address, a struct's fields, a type name it cannot know): there clmgit must fail out
loud, never print something else.
"""

from __future__ import annotations

import copy
from typing import Any


def f64(value: float) -> dict[str, Any]:
    return {"__go": "float64", "v": value}


NIL = {"__go": "nil"}
POOLS = [
    {"Name": "default-worker", "Profile": "worker-splitaz",
     "InstanceTypes": ["m5.large", "m5.xlarge"], "DiscountStrategy": "none", "MinSize": 1,
     "MaxSize": 3,
     "ConfigItems": {"taints": "dedicated=skipper:NoSchedule", "labels": "dedicated=skipper"}},
    {"Name": "spot", "Profile": "worker-karpenter", "InstanceTypes": ["m6g.large"],
     "DiscountStrategy": "spot", "MinSize": 0, "MaxSize": 3, "ConfigItems": {}},
]
BASE: dict[str, Any] = {
    "Cluster": {
        "ID": "aws:123456789012:eu-central-1:kube-1", "Alias": "kube-1", "LocalID": "kube-1",
        "InfrastructureAccount": "aws:123456789012", "Region": "eu-central-1",
        "APIServerURL": "https://kube-1.example.org", "Environment": "test", "Channel": "dev",
        "Provider": "zalando-aws", "CriticalityLevel": 1, "LifecycleStatus": "ready",
        "Owner": "team", "NodePools": POOLS,
        "ConfigItems": {"a": "1", "num": "5", "empty": "", "flag": "true", "values": "v-item",
                        "items": "i-item", "keys": "k-item", "get": "g-item", "copy": "c-item",
                        "pop": "p-item", "update": "u-item", "upper": "up-item",
                        "format": "f-item", "count": "n-item"},
    },
    "NodePool": POOLS[0],
    "Values": {
        "b": True, "i": 3, "neg": -42, "zero": 0, "f": 1.5, "f2": f64(2.0), "big": f64(1e6),
        "small": f64(1e-05), "six": f64(123456.0), "tenth": 0.1, "negf": -2.25,
        "s": "str", "es": "", "quote": 'say "hi"\n\ttab é \u00a0', "nil": NIL,
        "list": [1, 2, 3], "strs": ["b", "a"], "el": [], "mixed": ["a", 1, True, NIL, 2.5],
        "nested_list": [["a"], [1, 2], []],
        "m": {"b": 1, "a": 2, "B": 3, "10": 4, "9": 5, "é": 6, "_": 7},
        "sm": {"__go": "map[string]string", "v": {"z": "1", "a": "2"}}, "em": {},
        "nested": {"x": {"y": "deep", "l": [1, "a"]}, "n": NIL},
        "InstanceInfo": {"__go": "Instance", "v": {
            "InstanceType": "m5.large", "VCPU": 2, "Memory": 8589934592,
            "InstanceStorageDevices": 0, "InstanceStorageDeviceSize": 0,
            "Architecture": "amd64"}},
    },
}

_PRINT = [
    ("print_bool", '{{ print "x=" true }}'),
    ("print_two_ints", "{{ print 1 2 }}"),
    ("print_mixed", '{{ print "a" 1 2 "b" 3 }}'),
    ("print_float", "{{ print .Values.f .Values.f2 .Values.big }}"),
    ("print_list", '{{ print .Values.list "|" .Values.strs .Values.el }}'),
    ("print_map", "{{ print .Values.m }}|{{ print .Values.sm .Values.em }}"),
    ("print_nil_alone", "{{ print .Values.nil }}"),
    ("print_nil_between", "{{ print 1 .Values.nil 2 }}"),
    ("print_bools", "{{ print .Values.b false }}"),
    ("print_nothing", "[{{ print }}]"),
    ("print_char", "{{ print 'a' 'b' }}"),
    ("print_go_ints", "{{ print .Cluster.CriticalityLevel .NodePool.MinSize }}"),
    ("print_items", "{{ print .Cluster.ConfigItems.a .Cluster.ConfigItems.num }}"),
    ("print_nested", "{{ print .Values.nested }}"),
    ("print_mixed_list", "{{ print .Values.mixed }}"),
    ("println_values", '{{ println "a" 1 .Values.b }}'),
    ("println_nothing", "[{{ println }}]"),
    ("println_list", "{{ println .Values.strs .Values.nil }}"),
    ("print_piped", '{{ "x" | print 1 }}'),
    ("print_struct", "{{ print .Values.InstanceInfo }}"),
]

_PRINTF = [
    ("printf_s_int", '{{ printf "%s" 3 }}'),
    ("printf_s_bool", '{{ printf "%s" true }}'),
    ("printf_s_nil", '{{ printf "%s" .Values.nil }}'),
    ("printf_s_float", '{{ printf "%s" .Values.f }}'),
    ("printf_s_ints", '{{ printf "%s" .Values.list }}'),
    ("printf_s_strs", '{{ printf "%s" .Values.strs }}'),
    ("printf_s_map", '{{ printf "%s" .Values.m }}'),
    ("printf_s_mixed", '{{ printf "%s" .Values.mixed }}'),
    ("printf_s_int32", '{{ printf "%s" .Cluster.CriticalityLevel }}'),
    ("printf_s_int64", '{{ printf "%s|%5d|%-4s|" .NodePool.MinSize .NodePool.MaxSize '
                       '.NodePool.MaxSize }}'),
    ("printf_bad_verb_flags", '{{ printf "%-6d|%+d|%06d|%5t" "ab" .Values.f .Values.negf 1 }}'),
    ("printf_d_int", '{{ printf "%d|%d|%d" 3 .Values.neg .Cluster.CriticalityLevel }}'),
    ("printf_d_bool", '{{ printf "%d" true }}'),
    ("printf_d_list", '{{ printf "%d" .Values.list }}'),
    ("printf_d_strs", '{{ printf "%d" .Values.strs }}'),
    ("printf_v_all", '{{ printf "%v|%v|%v|%v|%v" .Values.f2 .Values.list .Values.sm '
                     '.Values.nil .Values.b }}'),
    ("printf_v_width", '{{ printf "[%5v][%-5v]" 1 "ab" }}'),
    ("printf_v_nested", '{{ printf "%v" .Values.nested }}'),
    ("printf_q_string", '{{ printf "%q" .Values.quote }}'),
    ("printf_q_int", '{{ printf "%q" 65 }}'),
    ("printf_q_strs", '{{ printf "%q" .Values.strs }}'),
    ("printf_q_bool", '{{ printf "%q" false }}'),
    ("printf_x", '{{ printf "%x|%X|%x|%x" "hé" 255 .Values.neg .Values.strs }}'),
    ("printf_x_bool", '{{ printf "%x" true }}'),
    ("printf_t", '{{ printf "%t|%t" true "x" }}'),
    ("printf_f", '{{ printf "%f|%.2f|%8.3f|%-8.1f|" .Values.f .Values.tenth .Values.negf 3.25 }}'),
    ("printf_f_int", '{{ printf "%f" 3 }}'),
    ("printf_f_zero_pad", '{{ printf "%08.2f|%+.1f|%+d" .Values.negf .Values.f 5 }}'),
    ("printf_width_s", '{{ printf "[%8s][%-8s][%.2s][%5.1s]" "abc" "abc" "héllo" "xyz" }}'),
    ("printf_zero_pad_d", '{{ printf "%05d|%-5d|%5d" .Values.neg 42 7 }}'),
    ("printf_zero_pad_bad", '{{ printf "%05d" "ab" }}'),
    # A string operand of a bad verb is zero-padded on its left, even one that starts with "-".
    ("printf_zero_pad_bad_dash", '{{ printf "%05d|%05d" "- " "+x" }}'),
    ("printf_missing", '{{ printf "%s-%d" "a" }}'),
    ("printf_extra_scalars", '{{ printf "x" 1 "a" .Values.nil .Values.f true }}'),
    ("printf_extra_list", '{{ printf "x" .Values.list }}'),
    ("printf_percent", '{{ printf "100%%|%s" "a" }}'),
    ("printf_e_refused", '{{ printf "%e" .Values.f }}'),
    ("printf_g_refused", '{{ printf "%g" .Values.f }}'),
    ("printf_plus_v_refused", '{{ printf "%+v" .Values.m }}'),
    ("printf_index_refused", '{{ printf "%[1]s" "a" }}'),
    ("printf_trailing_percent", '{{ printf "a%" }}'),
    ("printf_dynamic_format", "{{ printf .Cluster.ConfigItems.a }}"),
    ("printf_struct", '{{ printf "%v" .Values.InstanceInfo }}'),
    ("printf_items", '{{ printf "%s=%s" .Cluster.Alias .Cluster.ConfigItems.num }}'),
    ("printf_piped_list", '{{ .Values.strs | printf "%v-%v" "x" }}'),
    ("printf_nested_map_d", '{{ printf "%d" .Values.m }}'),
]

_OUTPUT = [
    ("out_floats", "{{ .Values.f }}|{{ .Values.f2 }}|{{ .Values.big }}|{{ .Values.small }}|"
                   "{{ .Values.six }}|{{ .Values.tenth }}|{{ .Values.negf }}"),
    ("out_float_literals", "{{ 1.5 }}|{{ 2.0 }}|{{ 1e6 }}|{{ 1e-7 }}|{{ 0.000123 }}"),
    ("out_int_literals", "{{ 0x10 }}|{{ 0o17 }}|{{ 1_000 }}|{{ -0 }}|{{ 'x' }}"),
    ("out_ints", "{{ .Values.i }}|{{ .Values.neg }}|{{ .Cluster.CriticalityLevel }}|"
                 "{{ .NodePool.MaxSize }}"),
    ("out_bools", "{{ .Values.b }}|{{ true }}|{{ not .Values.b }}"),
    ("out_lists", "{{ .Values.list }}|{{ .Values.strs }}|{{ .Values.el }}|"
                  "{{ .Values.nested_list }}"),
    ("out_mixed_list", "{{ .Values.mixed }}"),
    ("out_maps", "{{ .Values.m }}|{{ .Values.sm }}|{{ .Values.em }}"),
    ("out_nested_map", "{{ .Values.nested }}"),
    ("out_nil", "[{{ .Values.nil }}]"),
    ("out_nil_in_map", "[{{ .Values.nested.n }}]"),
    ("out_nil_var", "{{ $x := .Values.nil }}[{{ $x }}]"),
    ("out_instance_types", "{{ .NodePool.InstanceTypes }}"),
    ("out_config_items", "{{ .NodePool.ConfigItems }}"),
    ("out_struct", "{{ .Values.InstanceInfo }}"),
    ("out_cluster", "{{ .Cluster }}"),
    ("out_pool", "{{ .NodePool }}"),
    ("out_pools", "{{ .Cluster.NodePools }}"),
    ("out_nil_literal", "{{ nil }}"),
    ("out_index_list", "{{ index .Values.list 1 }}|{{ index .Values.mixed 3 }}"),
    ("out_index_map_missing", "[{{ index .Values.m \"zz\" }}]|[{{ index .Values.sm \"zz\" }}]"),
    ("out_with_float", "{{ with .Values.f2 }}{{ . }}{{ end }}"),
    ("out_range_floats", "{{ range .Values.mixed }}[{{ . }}]{{ end }}"),
    ("out_and_or", "{{ and 1 .Values.f2 }}|{{ or .Values.es .Values.list }}|"
                   "{{ or 0 .Values.nil }}"),
    ("out_len_float", "{{ len .Values.list }}"),
    ("out_define_list", '{{ define "d" }}{{ . }}{{ end }}{{ template "d" .Values.strs }}'),
    ("out_var_float", "{{ $f := 2.0 }}{{ $f }}|{{ $i := 2 }}{{ $i }}"),
    ("out_assigned_float", "{{ $f := 1 }}{{ $f = 2.0 }}{{ $f }}"),
    ("out_printf_in_var", '{{ $x := printf "%v" .Values.f2 }}{{ $x }}'),
]

_NAMES = [
    ("name_range1", '{{ $range1 := "mine" }}{{ range .Values.strs }}{{ end }}{{ $range1 }}'),
    ("name_dot1", '{{ $dot1 := "mine" }}{{ range .Values.strs }}{{ . }}{{ end }}{{ $dot1 }}'),
    ("name_dot_with", '{{ $dot1 := "mine" }}{{ with .Values.s }}{{ $dot1 }}{{ . }}{{ end }}'),
    ("name_underscore", '{{ $_dot1 := "u" }}{{ $_range1 := "v" }}{{ range .Values.strs }}'
                        '{{ $_dot1 }}{{ . }}{{ end }}{{ $_range1 }}'),
    ("name_u_prefix", '{{ $_x := "a" }}{{ $u_x := "b" }}{{ $_x }}{{ $u_x }}'),
    ("name_trailing", '{{ $x_ := "a" }}{{ $loop := "b" }}{{ $loop_ := "c" }}{{ $x_ }}{{ $loop }}'
                      '{{ $loop_ }}'),
    ("name_index", "{{ $index := 1 }}{{ index .Values.strs $index }}"),
    ("name_split", '{{ $split := "x" }}{{ $base64 := "y" }}{{ split "a,b" "," }}{{ $split }}'
                   '{{ base64 $base64 }}'),
    ("split_empty_nil", '{{ split "" "," }}|{{ len (split "" ",") }}|{{ range split "" "," }}x'
                        "{{ else }}none{{ end }}"),
    ("name_print", '{{ $print := "p" }}{{ print $print 1 }}'),
    ("name_go_helpers", '{{ $go_print := "g" }}{{ $go_out := "o" }}{{ $go_range := "r" }}'
                        "{{ range .Values.strs }}{{ . }}{{ end }}{{ print $go_print }}"
                        "{{ $go_out }}{{ $go_range }}"),
    ("name_data_vars", '{{ $Cluster := "c" }}{{ $Values := "v" }}{{ $Cluster }}{{ $Values }}'
                       "{{ .Cluster.Alias }}"),
    ("name_namespace", '{{ $namespace := "n" }}{{ $v := 1 }}{{ range .Values.list }}'
                       "{{ $v = . }}{{ end }}{{ $namespace }}{{ $v }}"),
    ("name_defines_dash_underscore", '{{ define "a-b" }}dash{{ end }}{{ define "a_b" }}under'
                                     '{{ end }}{{ template "a-b" }}|{{ template "a_b" }}'),
    ("name_defines_odd", '{{ define "a.b c" }}1{{ end }}{{ define "a_2e_b" }}2{{ end }}'
                         '{{ define "_tpl_x" }}3{{ end }}{{ template "a.b c" }}'
                         '{{ template "a_2e_b" }}{{ template "_tpl_x" }}'),
    ("name_define_dot_var", '{{ define "d" }}{{ $dot := "x" }}{{ $_dot := "y" }}{{ $dot }}'
                            '{{ $_dot }}{{ . }}{{ end }}{{ template "d" "z" }}'),
    ("name_nested_ranges", "{{ range $i, $e := .Values.strs }}{{ range $.Values.list }}"
                           "{{ $i }}{{ $e }}{{ . }}{{ end }}{{ end }}"),
    ("name_self", '{{ $self := "s" }}{{ $caller := "c" }}{{ $self }}{{ $caller }}'),
]

_ITEMS = [
    ("item_values", "{{ .Cluster.ConfigItems.values }}"),
    ("item_items_keys", "{{ .Cluster.ConfigItems.items }}|{{ .Cluster.ConfigItems.keys }}"),
    ("item_get_copy", "{{ .Cluster.ConfigItems.get }}|{{ .Cluster.ConfigItems.copy }}"),
    ("item_pop_update", "{{ .Cluster.ConfigItems.pop }}|{{ .Cluster.ConfigItems.update }}"),
    ("item_str_names", "{{ .Cluster.ConfigItems.upper }}|{{ .Cluster.ConfigItems.format }}|"
                       "{{ .Cluster.ConfigItems.count }}"),
    ("item_index_values", '{{ index .Cluster.ConfigItems "values" }}'),
    ("item_in_condition", '{{ if eq .Cluster.ConfigItems.items "i-item" }}y{{ end }}'),
    ("item_var_values", "{{ $c := .Cluster.ConfigItems }}{{ $c.values }}"),
    ("item_missing_keys", "{{ .Values.m.keys }}"),
    ("item_missing_clear", "{{ .Cluster.ConfigItems.clear }}"),
    ("item_string_method", "{{ .Cluster.LocalID.upper }}"),
    ("item_string_split", "{{ .Cluster.Alias.split }}"),
    ("item_list_append", "{{ .Values.strs.append }}"),
    ("item_pool_values", "{{ .NodePool.ConfigItems.values }}"),
    ("item_range_values", '{{ range .Cluster.NodePools }}{{ .ConfigItems.get }}{{ end }}'),
]

_TAINT_ITEMS = ["justkey", "=v:NoSchedule", "a=b=c:NoSchedule", "a=b:NoSchedule,", "",
                "a:NoSchedule:x", "a=:NoExecute", ":PreferNoSchedule", "a=b:noschedule",
                "k=v:NoExecute,justkey,x=y=z:NoSchedule,=:NoSchedule", "a=b", ",,"]
_TAINT_TEMPLATE = ("{{ len .NodePool.Taints }}:{{ range .NodePool.Taints }}"
                   "[{{ .Key }}|{{ .Value }}|{{ .Effect }}]{{ else }}none{{ end }}")
_TAINTS = [(f"taint_{i}", _TAINT_TEMPLATE, {"taints": item})
           for i, item in enumerate(_TAINT_ITEMS)] + [
    ("taint_absent", _TAINT_TEMPLATE, {}),
    ("taint_absent_print", "{{ .NodePool.Taints }}", {}),
    ("taint_absent_if", "{{ if .NodePool.Taints }}t{{ else }}none{{ end }}", {}),
    ("taint_print_list", "{{ .NodePool.Taints }}", {"taints": "a=b:NoSchedule"}),
    ("taint_print_one", "{{ range .NodePool.Taints }}{{ . }}{{ end }}", {"taints": "a:NoSchedule"}),
    ("taint_eq_key", '{{ range .NodePool.Taints }}{{ if eq .Key "dedicated" }}{{ .Value }}'
                     "{{ end }}{{ end }}", {"taints": "dedicated=x:NoSchedule,y:NoSchedule"}),
    ("taint_eq_effect", '{{ range .NodePool.Taints }}{{ eq .Effect "NoSchedule" }}{{ end }}',
     {"taints": "a:NoSchedule,b:NoExecute"}),
    ("taint_index", "{{ (index .NodePool.Taints 0).Key }}", {"taints": "a:NoSchedule"}),
    ("taint_index_absent", "{{ (index .NodePool.Taints 0).Key }}", {}),
    ("taint_time_added", "{{ range .NodePool.Taints }}{{ .TimeAdded }}{{ end }}",
     {"taints": "a:NoSchedule"}),
]

_REQ_TEMPLATE = ("{{ len .NodePool.KarpenterRequirements }}:"
                 "{{ range .NodePool.KarpenterRequirements }}{{ .Key }} {{ .Operator }} "
                 "{{ range .Values }}[{{ . }}]{{ end }};{{ end }}")
_REQUIREMENTS = [
    ("req_texts", _REQ_TEMPLATE, {"requirements": "- key: a\n  operator: In\n"
                                                  "  values: [yes, 1.0, 0x10, ~, 'q', true]\n"}),
    ("req_block_values", _REQ_TEMPLATE, {"requirements": "- key: b\n  operator: NotIn\n"
                                                         "  values:\n    - \"x y\"\n    - 'it''s'\n"
                                                         "    - null\n    - 010\n"}),
    ("req_null_key", _REQ_TEMPLATE,
     {"requirements": "- operator: Exists\n- key: ~\n  values: []\n"}),
    ("req_absent", _REQ_TEMPLATE, {}),
    ("req_absent_print", "{{ .NodePool.KarpenterRequirements }}", {}),
    ("req_numbers_key", _REQ_TEMPLATE, {"requirements": "- key: 1.50\n  operator: Gt\n"
                                                        "  values: [\"2\"]\n"}),
    ("req_eq_key", '{{ range .NodePool.KarpenterRequirements }}{{ eq .Key "a" }}{{ end }}',
     {"requirements": "- key: a\n"}),
    ("req_values_printed", "{{ range .NodePool.KarpenterRequirements }}{{ .Values }}{{ end }}",
     {"requirements": "- key: a\n  values: [x, ~, '']\n"}),
    ("req_print_key", "{{ range .NodePool.KarpenterRequirements }}{{ print .Key }}{{ end }}",
     {"requirements": "- key: a\n"}),
    ("req_if_key", "{{ range .NodePool.KarpenterRequirements }}{{ if .Key }}k{{ else }}none"
                   "{{ end }}{{ end }}", {"requirements": "- key: a\n- operator: In\n"}),
    ("req_not_yaml", _REQ_TEMPLATE, {"requirements": "- key: [unclosed\n"}),
]

_COMPARE = [
    ("eq_int_float", "{{ eq 1 1.0 }}"),
    ("eq_int32_int", "{{ eq .Cluster.CriticalityLevel 1 }}|{{ eq .NodePool.MinSize 1 }}"),
    ("eq_nil_string", '{{ eq .Values.nil "x" }}'),
    ("eq_many", '{{ eq "a" "b" "a" }}|{{ eq 1 2 3 }}'),
    ("eq_bool", "{{ eq .Values.b true }}|{{ eq false .Values.b }}"),
    ("eq_maps", "{{ eq .Values.em .Values.em }}"),
    ("eq_string_item", '{{ eq .Cluster.ConfigItems.num 5 }}'),
    ("eq_float_float", "{{ eq .Values.f 1.5 }}|{{ eq .Values.f2 2.0 }}"),
    ("ne_int_string", '{{ ne 1 "1" }}'),
    ("ne_values", '{{ ne .Values.s "str" }}|{{ ne .Values.i 4 }}'),
    ("lt_strings", '{{ lt "a" "b" }}|{{ lt "B" "a" }}|{{ lt "é" "z" }}'),
    ("lt_bools", "{{ lt true false }}"),
    ("lt_int_float", "{{ lt 1 2.5 }}"),
    ("lt_floats", "{{ lt .Values.f 2.5 }}|{{ gt .Values.f2 .Values.f }}"),
    ("le_ge", "{{ le 2 2 }}|{{ ge 1 2 }}|{{ gt 3 2 }}|{{ ge \"b\" \"a\" }}"),
    ("lt_lists", "{{ lt .Values.list .Values.list }}"),
    ("lt_nil", "{{ lt .Values.nil 1 }}"),
    ("lt_int32_int64", "{{ lt .Cluster.CriticalityLevel .NodePool.MaxSize }}"),
    ("eq_in_if", '{{ if eq .Values.i 3 }}three{{ end }}{{ if eq .Values.s "str" }}s{{ end }}'),
]

_RANGE = [
    ("range_int_var", "{{ range $i := 3 }}{{ $i }}{{ end }}"),
    ("range_int_two_vars", "{{ range $i, $e := 3 }}{{ $i }}{{ end }}"),
    ("range_string", '{{ range "abc" }}{{ . }}{{ end }}'),
    ("range_float", "{{ range .Values.f }}{{ . }}{{ end }}"),
    ("range_map_values", "{{ range .Values.m }}{{ . }},{{ end }}"),
    ("range_map_one_var", "{{ range $v := .Values.sm }}{{ $v }},{{ end }}"),
    ("range_map_two_vars", "{{ range $k, $v := .Values.sm }}{{ $k }}={{ $v }},{{ end }}"),
    ("range_nil_else", "{{ range .Values.nil }}x{{ else }}nothing{{ end }}"),
    ("range_list_index", "{{ range $i, $e := .Values.strs }}{{ $i }}:{{ $e }} {{ end }}"),
    ("range_empty_map_else", "{{ range .Values.em }}x{{ else }}empty{{ end }}"),
    ("range_items", "{{ range $k, $v := .Cluster.ConfigItems }}{{ $k }},{{ end }}"),
    ("range_pools", "{{ range .Cluster.NodePools }}{{ .Name }}:{{ .IsSpot }};{{ end }}"),
    ("range_struct", "{{ range .Values.InstanceInfo }}x{{ end }}"),
    ("range_cluster", "{{ range .Cluster }}x{{ end }}"),
    ("range_zero", "{{ range 0 }}x{{ else }}none{{ end }}"),
]

_INDEX_LEN = [
    ("index_int_on_map", "[{{ index .Values.m 1 }}]"),
    ("index_bool_on_map", "[{{ index .Cluster.ConfigItems true }}]"),
    ("index_string_on_list", '{{ index .Values.list "1" }}'),
    ("index_nil", "{{ index .Values.nil 0 }}"),
    ("index_string_byte", '{{ index "hé" 1 }}'),
    ("index_nested", '{{ index .Values.nested "x" "y" }}'),
    ("index_items_missing", '[{{ index .Cluster.ConfigItems "nope" }}]'),
    ("index_negative", "{{ index .Values.list -1 }}"),
    ("len_nil", "{{ len .Values.nil }}"),
    ("len_int", "{{ len 3 }}"),
    ("len_string_bytes", '{{ len "héllo" }}|{{ len .Values.quote }}'),
    ("len_struct", "{{ len .Cluster }}"),
    ("len_items", "{{ len .NodePool.ConfigItems }}"),
]

_NUMBERS = [
    ("num_octal", "{{ 010 }}|{{ 00 }}|{{ 0_7 }}|{{ -010 }}"),
    ("num_octal_bad", "{{ 08 }}"),
    ("num_exponent_is_float", '{{ 1e2 }}|{{ 1E2 }}|{{ .5e1 }}|{{ 1_000.5e-1 }}|{{ 1e1_0 }}'),
    ("num_exponent_printf", '{{ printf "%d|%v" 1e2 1e2 }}'),
    ("num_exponent_eq_int", "{{ eq 1e2 100 }}"),
    ("num_hex_float", "{{ 0x1p4 }}|{{ 0X1P-2 }}|{{ 0x1.8p1 }}|{{ 0x_1p4 }}"),
    ("num_hex_float_printf", '{{ printf "%v|%d" 0x1p-2 0x1p4 }}'),
    ("num_hex_float_no_exponent", "{{ 0x1.8 }}"),
    ("num_hex_int_with_e", '{{ 0x1e }}|{{ printf "%d" 0x1e }}'),
    ("num_signed_hex_with_e", '{{ printf "%d" -0x1e }}'),
    ("num_binary", "{{ 0b101 }}|{{ 0B11 }}|{{ 0O17 }}|{{ -0b1 }}"),
    ("num_binary_fraction", "{{ 0b1.1 }}"),
    ("num_minus_zero", "{{ -0 }}|{{ -0.0 }}|{{ +0 }}"),
    ("num_imaginary", "{{ 1i }}"),
    ("num_imaginary_zero", "{{ 0i }}"),
    ("num_imaginary_float", "{{ 1.5i }}"),
    ("num_underscores_bad", "{{ 1__0 }}"),
    ("num_underscore_trailing", "{{ 1_ }}"),
    ("num_letters_after", "{{ 1x }}"),
    ("num_exponent_missing", "{{ 1e }}"),
    ("num_prefix_alone", "{{ 0b }}"),
    ("num_sign_alone", "{{ - }}"),
    ("num_int64_edges", "{{ 9223372036854775807 }}|{{ -9223372036854775808 }}"),
    ("num_uint64", "{{ 18446744073709551615 }}"),
    ("num_overflow", "{{ 99999999999999999999 }}"),
    ("num_float_overflow", "{{ 1e400 }}"),
    ("num_as_argument", '{{ index .Values.list 0b1 }}|{{ printf "%v" 010 }}'),
]

_DEFINES = [
    ("define_calls_later_define", '{{ define "a" }}A{{ template "b" . }}{{ end }}'
                                  '{{ define "b" }}B{{ end }}{{ template "a" }}'),
    ("template_before_define", '{{ template "b" 1 }}{{ define "b" }}[{{ . }}]{{ end }}'),
    ("template_through_define_before", '{{ define "a" }}{{ template "b" . }}{{ end }}'
                                       '{{ template "a" 1 }}{{ define "b" }}[{{ . }}]{{ end }}'),
    ("template_undefined_not_run", '{{ if false }}{{ template "zz" }}{{ end }}ok'),
    ("template_undefined", '{{ template "zz" }}'),
    ("define_trims_beside", 'x {{- define "b" -}} y {{- end -}} z {{ template "b" }}'),
]

#: Arguments Go passes only if of the parameter's type, or constants it converts.
_TYPED = [
    ("typed_type_literal", '{{ instanceTypeCPUQuantity "m5.large" }}'),
    ("typed_type_of_pool", "{{ instanceTypeCPUQuantity (index .NodePool.InstanceTypes 0) }}|"
                           "{{ range .NodePool.InstanceTypes }}{{ instanceTypeCPUQuantity . }}"
                           "{{ end }}"),
    ("typed_type_of_instance", "{{ instanceTypeCPUQuantity .Values.InstanceInfo.InstanceType }}"),
    ("typed_type_string_item", "{{ instanceTypeCPUQuantity .Cluster.ConfigItems.a }}"),
    ("typed_type_string_var", '{{ $t := "m5.large" }}{{ instanceTypeCPUQuantity $t }}'),
    ("typed_type_piped_literal", '{{ "m5.large" | instanceTypeCPUQuantity }}'),
    ("typed_type_printed", '{{ printf "%d|%s|%v" (index .NodePool.InstanceTypes 0) '
                           '.Values.InstanceInfo.VCPU .Values.InstanceInfo.InstanceType }}'),
    ("typed_type_compared", '{{ eq (index .NodePool.InstanceTypes 0) "m5.large" }}|'
                            '{{ lt .Values.InstanceInfo.InstanceType "z" }}'),
    ("typed_int64_literal", "{{ .Values.InstanceInfo.MemoryFraction 50 }}|"
                            "{{ .Values.InstanceInfo.MemoryFraction 2.0 }}"),
    ("typed_int64_piped", "{{ 50 | .Values.InstanceInfo.MemoryFraction }}"),
    ("typed_int64_value", "{{ .Values.InstanceInfo.MemoryFraction .Values.i }}"),
    ("typed_int64_float_literal", "{{ .Values.InstanceInfo.MemoryFraction 1.5 }}"),
    ("typed_int64_of_int64", "{{ .Values.InstanceInfo.MemoryFraction .NodePool.MaxSize }}"),
    ("typed_int64_negative", "{{ .Values.InstanceInfo.MemoryFraction -3 }}"),
    ("typed_float64", "{{ .Values.InstanceInfo.AvailableStorage 0.9 .NodePool.MaxSize 1 }}|"
                      "{{ .Values.InstanceInfo.AvailableStorage .Values.f 7 .Values.f2 }}"),
    ("typed_float64_int_value", "{{ .Values.InstanceInfo.AvailableStorage .Values.i 7 1 }}"),
    ("typed_result_printed", '{{ printf "%s" (.Values.InstanceInfo.MemoryFraction 50) }}'),
]

#: Outside node-pool templates CLM's `NodePool` is a nil pointer: it prints `<nil>`.
_NO_POOL = [
    ("nopool_out", "[{{ .NodePool }}]"),
    ("nopool_if_with", "{{ if .NodePool }}y{{ else }}n{{ end }}|{{ with .NodePool }}y{{ else }}n"
                       "{{ end }}|{{ not .NodePool }}"),
    ("nopool_var", "{{ $p := .NodePool }}[{{ $p }}]"),
    ("nopool_and_or", "{{ and .NodePool 1 }}|{{ or .NodePool 1 }}|{{ and 1 .NodePool }}"),
    ("nopool_print", '{{ print 1 .NodePool 2 }}|{{ println .NodePool }}|'
                     '{{ printf "%v" .NodePool }}'),
    ("nopool_printf_s", '{{ printf "%s" .NodePool }}'),
    ("nopool_field", "{{ .NodePool.Name }}"),
    ("nopool_method", "{{ .NodePool.IsSpot }}"),
    ("nopool_range", "{{ range .NodePool }}x{{ end }}"),
    ("nopool_len_index", "{{ len .NodePool }}"),
    ("nopool_index", "{{ index .NodePool 0 }}"),
    ("nopool_eq_self", "{{ eq .NodePool .NodePool }}"),
]

#: Go prints these (an address, a struct's fields, an operand's exact type); clmgit fails.
UNMATCHED = {
    "print_struct": "a struct", "printf_extra_list": "the Go type of an extra list",
    "printf_struct": "a struct", "out_struct": "a struct", "out_cluster": "a struct",
    "out_pool": "a struct", "out_pools": "pointers", "taint_print_list": "pointers",
    "taint_print_one": "a struct", "req_print_key": "a pointer",
    "num_imaginary": "a complex number", "num_imaginary_zero": "a complex number",
    "num_imaginary_float": "a complex number", "nopool_printf_s": "a pointer's Go type",
}


def cases() -> list[tuple[str, str, dict[str, Any]]]:
    """Every case of the table: name, template, the judge's data."""
    out = [(name, template, BASE)
           for name, template in _PRINT + _PRINTF + _OUTPUT + _NAMES + _ITEMS + _COMPARE
           + _RANGE + _INDEX_LEN + _NUMBERS + _DEFINES + _TYPED]
    for name, template, items in _TAINTS + _REQUIREMENTS:
        out.append((name, template, with_pool_items(items)))
    out += [(name, template, {**BASE, "NodePool": None}) for name, template in _NO_POOL]
    return out


def with_pool_items(items: dict[str, str]) -> dict[str, Any]:
    """`BASE` with the node pool's config items replaced."""
    data = copy.deepcopy(BASE)
    data["NodePool"] = {**data["NodePool"], "ConfigItems": items}
    return data
