package getopt

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

var opts = []Option{
	{Name: "algorithm", HasArg: true, Short: 'a'},
	{Name: "check", Short: 'c'},
	{Name: "quiet"},
	{Name: "status"},
	{Name: "strict"},
	{Name: "tag"},
	{Name: "zero", Short: 'z'},
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args     string
		given    string // NAME=VALUE@FIRST-LAST ...
		operands string
		err      string
	}{
		{"-a sha256 --tag f1 -cz --algorithm=md5 f2 -- -c", "algorithm=sha256@0-1 tag=@2-2 check=@4-4 zero=@4-4 algorithm=md5@5-5", "f1 f2 -c", ""},
		{"-asha1 - --qui --alg sha512 --stat", "algorithm=sha1@0-0 quiet=@2-2 algorithm=sha512@3-4 status=@5-5", "-", ""},
		{"--st", "", "", "option '--st' is ambiguous; possibilities: '--status' '--strict'"},
		{"--tag --frob=1", "tag=@0-0", "", "unrecognized option '--frob=1'"},
		{"-q", "", "", "invalid option -- 'q'"},
		{"-c -a", "check=@0-0", "", "option requires an argument -- 'a'"},
		{"--algorithm", "", "", "option '--algorithm' requires an argument"},
		{"--ta=x", "", "", "option '--tag' doesn't allow an argument"},
	} {
		given, operands, err := Parse(opts, strings.Fields(tc.args))
		var g []string
		for _, x := range given {
			g = append(g, x.Name+"="+x.Value+"@"+strconv.Itoa(x.First)+"-"+strconv.Itoa(x.Last))
		}
		if strings.Join(g, " ") != tc.given || strings.Join(operands, " ") != tc.operands {
			t.Errorf("%s: given %q, operands %q; want %q, %q", tc.args, g, operands, tc.given, tc.operands)
		}
		if msg := errString(err); msg != tc.err {
			t.Errorf("%s: error %q, want %q", tc.args, msg, tc.err)
		}
	}
	if g, _, _ := Parse(opts, []string{"-a", "x", "-c"}); !reflect.DeepEqual(g[0], Given{Name: "algorithm", Value: "x", HasValue: true, First: 0, Last: 1}) || g[1].HasValue {
		t.Errorf("given %+v", g)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
