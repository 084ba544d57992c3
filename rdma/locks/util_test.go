package locks_test

import "fmt"

func fmtSscan(s string, v *int64) (int, error) { return fmt.Sscan(s, v) }
