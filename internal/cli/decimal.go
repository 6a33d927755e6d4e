package cli

import (
	"errors"
	"flag"
	"strconv"
)

// DecimalVar defines an integer flag read in base 10 only, as Postfix's
// tools read their counts and sizes (atoi): flag.Int's base 0 takes 010
// for 8 and 0x10 for 16, and refuses 08.
func DecimalVar[T int | int64](fs *flag.FlagSet, p *T, name string, value T, usage string) {
	*p = value
	fs.Var(decimal[T]{p}, name, usage)
}

type decimal[T int | int64] struct{ p *T }

func (d decimal[T]) String() string {
	if d.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*d.p), 10)
}

func (d decimal[T]) Set(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err == nil && int64(T(n)) != n {
		err = strconv.ErrRange
	}
	switch {
	case errors.Is(err, strconv.ErrRange):
		return errors.New("out of range")
	case err != nil:
		return errors.New("want a decimal number")
	}
	*d.p = T(n)
	return nil
}
