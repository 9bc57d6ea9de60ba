//go:build unix

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("proctime", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 21, "runs of each command")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: proctime [-n runs] -- cmd args... [-- cmd args...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cmds := split(fs.Args())
	if len(cmds) == 0 || *n < 1 {
		fs.Usage()
		return 2
	}
	stats := make([]series, len(cmds))
	for range *n {
		for i, argv := range cmds {
			if err := stats[i].run(argv); err != nil {
				fmt.Fprintf(stderr, "proctime: %s: %v\n", strings.Join(argv, " "), err)
				return 2
			}
		}
	}
	report(stdout, cmds, stats)
	for i, s := range stats {
		if w := s.warning(); w != "" {
			fmt.Fprintf(stderr, "proctime: %s: %s\n", strings.Join(cmds[i], " "), w)
		}
	}
	return 0
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
	maxRSS    int64 // bytes
	codes     []int
}

// run runs argv once with its output discarded. A non-zero exit is not an
// error here: check exits 1 when an item is unmet and grep -L when a file
// matches; warning says when the exits look wrong.
func (s *series) run(argv []string) error {
	c := exec.Command(argv[0], argv[1:]...)
	start := time.Now()
	err := c.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		return err
	}
	s.wall = append(s.wall, time.Since(start))
	s.codes = append(s.codes, c.ProcessState.ExitCode())
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = append(s.cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		s.maxRSS = max(s.maxRSS, maxRSSBytes(ru.Maxrss))
	}
	return nil
}

// maxRSSBytes converts getrusage's ru_maxrss, which is KiB on Linux and
// the BSDs but bytes on macOS.
func maxRSSBytes(v int64) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return v
	}
	return v * 1024
}

// warning is what makes the timings suspect: runs that ended differently,
// or an exit status of 2 and above, which usually means the command did
// not do its work (a usage or configuration error).
func (s *series) warning() string {
	if len(s.codes) == 0 {
		return ""
	}
	codes := slices.Compact(slices.Sorted(slices.Values(s.codes)))
	switch {
	case len(codes) > 1:
		return fmt.Sprintf("runs exited differently (%v); the timings mix different work", codes)
	case codes[0] >= 2:
		return fmt.Sprintf("every run exited %d; is the command right?", codes[0])
	}
	return ""
}

func report(w io.Writer, cmds [][]string, stats []series) {
	base := median(stats[len(stats)-1].wall)
	for i, s := range stats {
		fmt.Fprintf(w, "%-40s wall %6.1f ms (min %6.1f)  cpu %6.1f ms  peak RSS %6.1f MB  %.2fx\n",
			strings.Join(cmds[i], " "), ms(median(s.wall)), ms(minimum(s.wall)), ms(median(s.cpu)),
			float64(s.maxRSS)/(1<<20), float64(median(s.wall))/float64(base))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
