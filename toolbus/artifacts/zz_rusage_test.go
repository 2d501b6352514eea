package artifacts

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZRusage(t *testing.T) {
	s := newStore(t, Options{Root: t.TempDir()})
	frame, _ := os.ReadFile("testdata/frame.json")
	doc := RenderContext(Context{Answer: decodeFile(t, "frame.json")}, ContextLimits{})
	const n = 1000
	for _, mode := range []string{"new span", "same span"} {
		c0, w0 := cpu(), time.Now()
		for i := 0; i < n; i++ {
			span := "s"
			if mode == "new span" {
				span = "span-" + strconv.Itoa(i)
			}
			if _, _, err := s.WriteCall("run-"+mode[:3], span, doc, frame); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Printf("%s: cpu %v/op wall %v/op\n", mode, (cpu()-c0)/n, time.Since(w0)/n)
	}
	c0 := cpu()
	for i := 0; i < n; i++ {
		RenderContext(Context{Answer: decodeFile(t, "frame.json")}, ContextLimits{})
	}
	fmt.Printf("render+decode: cpu %v/op\n", (cpu()-c0)/n)
}
