//go:build unix

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 21, "runs of each command")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: proctime [-n runs] -- cmd args... [-- cmd args...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	cmds := split(flag.Args())
	if len(cmds) == 0 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	stats := make([]*series, len(cmds))
	for i := range stats {
		stats[i] = &series{}
	}
	for range *n {
		for i, argv := range cmds {
			if err := stats[i].run(argv); err != nil {
				fmt.Fprintf(os.Stderr, "proctime: %s: %v\n", strings.Join(argv, " "), err)
				os.Exit(2)
			}
		}
	}
	report(os.Stdout, cmds, stats)
}

// split cuts args at each "--" into commands.
func split(args []string) [][]string {
	var cmds [][]string
	var cur []string
	for _, a := range args {
		if a == "--" {
			if len(cur) > 0 {
				cmds = append(cmds, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, a)
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

type series struct {
	wall, cpu []time.Duration
	maxRSS    int64 // KiB
}

// run runs argv once with its output discarded. A non-zero exit is not an
// error: check exits 1 when an item is unmet and grep -L when a file
// matches.
func (s *series) run(argv []string) error {
	c := exec.Command(argv[0], argv[1:]...)
	start := time.Now()
	err := c.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		return err
	}
	s.wall = append(s.wall, time.Since(start))
	ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage)
	if ok {
		s.cpu = append(s.cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		s.maxRSS = max(s.maxRSS, ru.Maxrss)
	}
	return nil
}

func report(w io.Writer, cmds [][]string, stats []*series) {
	base := median(stats[len(stats)-1].wall)
	for i, s := range stats {
		fmt.Fprintf(w, "%-40s wall %6.1f ms (min %6.1f)  cpu %6.1f ms  peak RSS %6.1f MB  %.2fx\n",
			strings.Join(cmds[i], " "), ms(median(s.wall)), ms(minimum(s.wall)), ms(median(s.cpu)),
			float64(s.maxRSS)/1024, float64(median(s.wall))/float64(base))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
