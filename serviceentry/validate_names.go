package serviceentry

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The name rules of Istio's webhook: DNS-1123 labels, host names with a
// wildcard first label, unix socket paths, label keys and values, and
// exportTo entries.

// maxLabelLen is the longest DNS-1123 label; maxDNSNameLen the longest
// name the webhook takes.
const (
	maxLabelLen   = 63
	maxDNSNameLen = 255
)

// isDNSLabel reports whether s is a DNS-1123 label as Istio reads one: 1
// to 63 letters (either case), digits and inner hyphens. Port names and
// exportTo namespaces are such labels.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > maxLabelLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isWildcardLabel reports whether s may be a host's first label: "*", or
// a DNS label, bare or after "*" or "*-" ("*foo" and "*-foo" are partial
// wildcards, which the webhook takes with a warning).
func isWildcardLabel(s string) bool {
	if len(s) > maxLabelLen {
		return false
	}
	switch {
	case s == "*":
		return true
	case strings.HasPrefix(s, "*-"):
		return isDNSLabel(s[2:])
	case strings.HasPrefix(s, "*"):
		return isDNSLabel(s[1:])
	}
	return isDNSLabel(s)
}

// checkHost checks a ServiceEntry host: a DNS name of at most 255
// characters whose first label may be a wildcard (see isWildcardLabel);
// "*" alone is refused, as it would capture all traffic.
func checkHost(h string) error {
	if h == "*" {
		return errors.New(`"*" alone is not allowed`)
	}
	if err := checkNameLength(h); err != nil {
		return err
	}
	first, rest, more := strings.Cut(h, ".")
	if !isWildcardLabel(first) {
		return fmt.Errorf("label %q: must have 1 to 63 letters, digits and inner hyphens, after an optional leading * or *-", first)
	}
	if more {
		return checkLabels(rest)
	}
	return nil
}

// isPartialWildcard reports whether a valid host has a wildcard that is
// not a whole first label ("*foo.example.com").
func isPartialWildcard(h string) bool {
	return strings.Contains(h, "*") && h != "*" && !strings.HasPrefix(h, "*.")
}

// checkFQDN checks a DNS name without wildcards: at most 255 characters,
// dot-separated DNS labels (a trailing dot allowed), the last not all
// digits.
func checkFQDN(name string) error {
	if err := checkNameLength(name); err != nil {
		return err
	}
	return checkLabels(name)
}

func checkNameLength(name string) error {
	switch {
	case name == "":
		return errors.New("empty")
	case len(name) > maxDNSNameLen:
		return fmt.Errorf("longer than %d characters", maxDNSNameLen)
	}
	return nil
}

// checkLabels checks the dot-separated labels of a name; the last may be
// empty (a trailing dot), and must not be a number.
func checkLabels(name string) error {
	labels := strings.Split(name, ".")
	if top := labels[len(labels)-1]; top != "" {
		if _, err := strconv.Atoi(top); err == nil {
			return fmt.Errorf("top-level label %q is all digits", top)
		}
	}
	for i, l := range labels {
		if i == len(labels)-1 && l == "" {
			break
		}
		if !isDNSLabel(l) {
			return fmt.Errorf("label %q: each dot-separated label must have 1 to 63 letters, digits and inner hyphens", l)
		}
	}
	return nil
}

// checkUnixPath checks the path of a unix:// address: an abstract socket
// ("@name"), or an absolute path to a file.
func checkUnixPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty unix socket path")
	case strings.HasPrefix(p, "@"):
		return nil
	case !path.IsAbs(p) || strings.HasSuffix(p, "/"):
		return fmt.Errorf("unix socket path %q is not an absolute path to a file", p)
	}
	return nil
}

// labelErrors checks label keys and values as Kubernetes does: a key is
// an optional DNS-name prefix and "/", then a name of at most 63
// characters; a name, and a value, are empty (values only) or
// alphanumeric at both ends with "-", "_" and "." inside. In key order.
func labelErrors(labels map[string]string) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if !isLabelKey(k) {
			errs = append(errs, fmt.Errorf("label key %q is not valid", k))
		}
		if v := labels[k]; v != "" && !isQualifiedName(v) {
			errs = append(errs, fmt.Errorf("label %q: value %q is not valid", k, v))
		}
	}
	return errs
}

func isLabelKey(k string) bool {
	name := k
	if prefix, rest, ok := strings.Cut(k, "/"); ok {
		if len(prefix) > 253 || !isDNSSubdomain(prefix) {
			return false
		}
		name = rest
	}
	return len(name) <= maxLabelLen && isQualifiedName(name)
}

// isDNSSubdomain reports whether s is dot-separated DNS labels.
func isDNSSubdomain(s string) bool {
	for _, l := range strings.Split(s, ".") {
		if !isDNSLabel(l) {
			return false
		}
	}
	return true
}

// isQualifiedName reports whether s is alphanumeric at both ends, with
// letters, digits, "-", "_" and "." between.
func isQualifiedName(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// exportToErrors checks a ServiceEntry's exportTo: each entry ".", "*",
// "~" or a namespace (a DNS label), none twice ("." counting as the
// entry's own namespace), and "*" or "~" only alone.
func exportToErrors(namespace string, exportTo []string) []error {
	var errs []error
	seen := map[string]bool{}
	for _, e := range exportTo {
		key := e
		if e == "." {
			key = namespace
		}
		switch {
		case seen[key] && key != e:
			errs = append(errs, fmt.Errorf("exportTo: %q and the entry's own namespace %q both given", e, namespace))
			continue
		case seen[key]:
			errs = append(errs, fmt.Errorf("exportTo: %q given twice", e))
			continue
		case e != "." && e != "*" && e != "~" && !isDNSLabel(e):
			errs = append(errs, fmt.Errorf("exportTo: %q is neither \".\", \"*\", \"~\" nor a namespace name", e))
			continue
		}
		seen[key] = true
	}
	if len(exportTo) > 1 {
		if seen["*"] {
			errs = append(errs, errors.New(`exportTo: "*" (everywhere) together with other entries`))
		}
		if seen["~"] {
			errs = append(errs, errors.New(`exportTo: "~" (nowhere) together with other entries`))
		}
	}
	return errs
}
