package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/eventlog"
)

// Config is a load run. Zero fields take the figures.
type Config struct {
	// Deliveries is how many requests are sent, duplicates included;
	// default 5000.
	Deliveries int
	// Items is how many work items they are spread over; default 50.
	Items int
	// Senders is how many goroutines send; default 8. Each owns some
	// items and sends an item's deliveries one after the other, each once
	// the last was answered, so the order they were accepted in is known.
	Senders int
	// Duplicates is the share of Deliveries that resend a delivery
	// already answered, keeping its id; default 0.1, negative for none.
	Duplicates float64
	// Seed makes the ids and the interleaving repeatable.
	Seed   uint64
	Secret []byte
	// KillAfter, when the target is a Restarter and KillAfter > 0, is the
	// number of 202s after which the server is killed with SIGKILL and
	// started again. Senders retry what failed meanwhile, with the same
	// id, as GitHub's redelivery does.
	KillAfter int
	// Timeout bounds the run, sending and waiting; default 3 minutes.
	Timeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Deliveries <= 0 {
		c.Deliveries = 5000
	}
	if c.Items <= 0 {
		c.Items = 50
	}
	if c.Senders <= 0 {
		c.Senders = 8
	}
	switch {
	case c.Duplicates == 0:
		c.Duplicates = 0.1
	case c.Duplicates < 0:
		c.Duplicates = 0
	}
	if c.Timeout <= 0 {
		c.Timeout = 3 * time.Minute
	}
	return c
}

// Target is a server under load.
type Target interface{ URL() string }

// Restarter is a Target that can be killed and started again.
type Restarter interface {
	Target
	Kill() error
	Restart() error
}

// Report is what a run measured and what its checks found.
type Report struct {
	Requests   int // sent, duplicates included, retries not
	Unique     int // distinct delivery ids
	Duplicates int // requests that resent an id already answered
	Retries    int // requests sent again after a failure
	Killed     bool
	// ReRun is how many deliveries a Process call began for more than
	// once: those being processed when the server was killed.
	ReRun int
	// ToAccepted is the time from a request's first attempt to its 202;
	// ToProcessed from a delivery's first attempt to its Process call's
	// record.
	ToAccepted, ToProcessed Quantiles
	Elapsed                 time.Duration
	// Problems lists every check that failed; empty means every unique
	// delivery was processed, had exactly one outcome event, and the
	// deliveries of each item were processed in the order sent.
	Problems []string
}

// Quantiles summarise durations.
type Quantiles struct{ P50, P99, Max time.Duration }

func quantiles(d []time.Duration) Quantiles {
	if len(d) == 0 {
		return Quantiles{}
	}
	slices.Sort(d)
	at := func(p float64) time.Duration {
		i := int(float64(len(d))*p+0.999999) - 1
		return d[max(0, min(i, len(d)-1))]
	}
	return Quantiles{P50: at(0.50), P99: at(0.99), Max: d[len(d)-1]}
}

func (q Quantiles) String() string {
	r := func(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }
	return fmt.Sprintf("p50 %s  p99 %s  max %s", r(q.P50), r(q.P99), r(q.Max))
}

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "requests %d (unique %d, duplicates %d, retries %d) in %s\n",
		r.Requests, r.Unique, r.Duplicates, r.Retries, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "to 202:       %s\n", r.ToAccepted)
	fmt.Fprintf(&b, "to processed: %s\n", r.ToProcessed)
	if r.Killed {
		fmt.Fprintf(&b, "killed with SIGKILL and restarted; deliveries whose processing began again after the restart: %d\n", r.ReRun)
	}
	if len(r.Problems) == 0 {
		b.WriteString("ok: every unique delivery processed, one outcome event each, in order per item\n")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "PROBLEM: %s\n", p)
	}
	return b.String()
}

// delivery is one unique delivery of the plan.
type delivery struct {
	id   string
	item int // 1-based issue number
	n    int // its place in its item's sequence, from 1
	body []byte
}

// payload is the shape of a load delivery's body.
type payload struct {
	Load struct {
		N int `json:"n"`
	} `json:"load"`
}

// plan lays out what each sender sends, in order.
func plan(cfg Config) (uniques []*delivery, senders [][]*delivery, dups int) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x10ad))
	dups = int(float64(cfg.Deliveries)*cfg.Duplicates + 0.5)
	unique := cfg.Deliveries - dups
	perItem := make([][]*delivery, cfg.Items)
	for i := range unique {
		item := i % cfg.Items
		d := &delivery{
			id:   fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff),
			item: item + 1,
			n:    len(perItem[item]) + 1,
		}
		d.body = fmt.Appendf(nil, `{"action":"created","repository":{"full_name":"load/repo"},"issue":{"number":%d},"comment":{"body":"load %d"},"load":{"n":%d}}`, d.item, d.n, d.n)
		perItem[item] = append(perItem[item], d)
		uniques = append(uniques, d)
	}
	senders = make([][]*delivery, cfg.Senders)
	for s := range senders {
		// Interleave the sender's items at random, each in its order.
		var lanes [][]*delivery
		for item := s; item < cfg.Items; item += cfg.Senders {
			lanes = append(lanes, perItem[item])
		}
		for {
			var open []int
			for i, l := range lanes {
				if len(l) > 0 {
					open = append(open, i)
				}
			}
			if len(open) == 0 {
				break
			}
			i := open[rng.IntN(len(open))]
			senders[s] = append(senders[s], lanes[i][0])
			lanes[i] = lanes[i][1:]
		}
	}
	// Each duplicate resends, at a random later point, a delivery its
	// sender already sent.
	for k := range dups {
		s := k % cfg.Senders
		seq := senders[s]
		if len(seq) == 0 {
			continue
		}
		at := 1 + rng.IntN(len(seq))
		orig := seq[rng.IntN(at)]
		senders[s] = slices.Insert(seq, at, orig)
	}
	return uniques, senders, dups
}

// Run sends the load to t and checks what the server in dir did: dir holds
// its ProcessedFile and EventsFile. It waits until every unique delivery
// has its outcome event (or the timeout), and does not stop the server.
func Run(ctx context.Context, cfg Config, t Target, dir string) (*Report, error) {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	uniques, senders, dups := plan(cfg)
	rep := &Report{Unique: len(uniques), Duplicates: dups}
	client := &http.Client{
		Timeout:   15 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Senders, MaxConnsPerHost: cfg.Senders},
	}
	defer client.CloseIdleConnections()

	var (
		mu         sync.Mutex
		firstSent  = map[string]time.Time{}
		toAccepted []time.Duration
		problems   []string
		accepted   atomic.Int64
		retries    atomic.Int64
		requests   atomic.Int64
		killOnce   sync.Once
		killErr    error
		restarting sync.WaitGroup
	)
	restarter, canKill := t.(Restarter)
	kill := func() {
		killOnce.Do(func() {
			rep.Killed = true
			restarting.Add(1)
			go func() {
				defer restarting.Done()
				if err := restarter.Kill(); err != nil {
					killErr = err
					return
				}
				killErr = restarter.Restart()
			}()
		})
	}
	send := func(d *delivery) error {
		start := time.Now()
		mu.Lock()
		if _, ok := firstSent[d.id]; !ok {
			firstSent[d.id] = start
		}
		mu.Unlock()
		requests.Add(1)
		for attempt := 0; ; attempt++ {
			if attempt > 0 {
				retries.Add(1)
				select {
				case <-ctx.Done():
					return fmt.Errorf("delivery %s: no 202 before the timeout", d.id)
				case <-time.After(20 * time.Millisecond):
				}
			}
			code, err := post(ctx, client, t.URL(), cfg.Secret, d)
			if err != nil || code >= 500 {
				continue // the server is down or restarting
			}
			if code != http.StatusAccepted {
				return fmt.Errorf("delivery %s: got status %d, want 202", d.id, code)
			}
			mu.Lock()
			toAccepted = append(toAccepted, time.Since(start))
			mu.Unlock()
			if n := accepted.Add(1); canKill && cfg.KillAfter > 0 && n == int64(cfg.KillAfter) {
				kill()
			}
			return nil
		}
	}
	begin := time.Now()
	var wg sync.WaitGroup
	for _, seq := range senders {
		wg.Go(func() {
			for _, d := range seq {
				if err := send(d); err != nil {
					mu.Lock()
					problems = append(problems, err.Error())
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	restarting.Wait()
	if killErr != nil {
		return nil, fmt.Errorf("kill and restart the server: %w", killErr)
	}
	rep.Requests, rep.Retries = int(requests.Load()), int(retries.Load())
	rep.ToAccepted = quantiles(toAccepted)

	outcomes, dupDrops, err := waitOutcomes(ctx, filepath.Join(dir, EventsFile), uniques)
	if err != nil {
		return nil, err
	}
	rep.Elapsed = time.Since(begin)
	problems = append(problems, check(uniques, outcomes, dupDrops, dups)...)
	recs, err := readProcessed(filepath.Join(dir, ProcessedFile))
	if err != nil {
		return nil, err
	}
	var toProcessed []time.Duration
	rerun, recProblems := checkProcessed(uniques, recs, firstSent, &toProcessed)
	problems = append(problems, recProblems...)
	rep.ReRun = rerun
	if rerun > 0 && !rep.Killed {
		problems = append(problems, fmt.Sprintf("%d deliveries processed more than once without a crash", rerun))
	}
	rep.ToProcessed = quantiles(toProcessed)
	rep.Problems = problems
	return rep, nil
}

// post sends one signed delivery and returns the status.
func post(ctx context.Context, c *http.Client, url string, secret []byte, d *delivery) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(d.body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ingress.HeaderEvent, "issue_comment")
	req.Header.Set(ingress.HeaderDelivery, d.id)
	req.Header.Set(ingress.HeaderSignature256, ingress.Sign(secret, d.body))
	req.Header.Set("User-Agent", "GitHub-Hookshot/loadgen")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// waitOutcomes reads the event log until every unique delivery has an
// outcome event or ctx ends, and returns the outcome events per id and the
// number of duplicate-delivery drops.
func waitOutcomes(ctx context.Context, path string, uniques []*delivery) (map[string]int, int, error) {
	for {
		outcomes, dupDrops, err := readOutcomes(path)
		if err != nil {
			return nil, 0, err
		}
		missing := 0
		for _, u := range uniques {
			if outcomes[u.id] == 0 {
				missing++
			}
		}
		if missing == 0 {
			return outcomes, dupDrops, nil
		}
		select {
		case <-ctx.Done():
			return outcomes, dupDrops, nil // check reports what is missing
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// readOutcomes counts, per delivery id, the outcome events of processing
// (routing.routed, or routing.dropped other than a duplicate's), and the
// duplicate drops.
func readOutcomes(path string) (map[string]int, int, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]int{}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	outcomes, dupDrops := map[string]int{}, 0
	// A torn line is no outcome: the queue writes that outcome again.
	_, err = eventlog.Read(f, func(line []byte) error {
		var rec struct {
			Event      string `json:"event"`
			DeliveryID string `json:"delivery_id"`
			Reason     string `json:"reason"`
		}
		if json.Unmarshal(line, &rec) != nil {
			return nil
		}
		switch {
		case rec.Event == "routing.dropped" && rec.Reason == channels.DropDuplicateDelivery:
			dupDrops++
		case rec.Event == "routing.routed", rec.Event == "routing.dropped":
			outcomes[rec.DeliveryID]++
		}
		return nil
	})
	return outcomes, dupDrops, err
}

func check(uniques []*delivery, outcomes map[string]int, dupDrops, dups int) []string {
	var problems []string
	known := map[string]bool{}
	missing, twice := 0, 0
	for _, u := range uniques {
		known[u.id] = true
		switch n := outcomes[u.id]; {
		case n == 0:
			missing++
		case n > 1:
			twice++
		}
	}
	if missing > 0 {
		problems = append(problems, fmt.Sprintf("%d deliveries answered 202 have no outcome event", missing))
	}
	if twice > 0 {
		problems = append(problems, fmt.Sprintf("%d deliveries have more than one outcome event", twice))
	}
	for id := range outcomes {
		if !known[id] {
			problems = append(problems, fmt.Sprintf("an outcome event for %s, which was never sent", id))
		}
	}
	if dupDrops < dups {
		problems = append(problems, fmt.Sprintf("got %d duplicate-delivery drops, want at least %d", dupDrops, dups))
	}
	return problems
}

// processedRec is one line of ProcessedFile.
type processedRec struct {
	id, item string
	n        int
	at       time.Time
}

func readProcessed(path string) ([]processedRec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []processedRec
	for line := range strings.Lines(string(data)) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 4 {
			// A kill can cut nothing short (each line is one write), so
			// anything else is a bug.
			return nil, fmt.Errorf("%s: malformed line %q", path, line)
		}
		n, err1 := strconv.Atoi(f[2])
		ns, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: malformed line %q", path, line)
		}
		out = append(out, processedRec{id: f[0], item: f[1], n: n, at: time.Unix(0, ns)})
	}
	return out, nil
}

// checkProcessed checks the processor's record: every unique delivery is
// there, and each item's deliveries first appear in the order they were
// sent. It returns how many appear more than once.
func checkProcessed(uniques []*delivery, recs []processedRec, firstSent map[string]time.Time, toProcessed *[]time.Duration) (int, []string) {
	var problems []string
	count := map[string]int{}
	lastN := map[string]int{}
	outOfOrder := 0
	for _, r := range recs {
		count[r.id]++
		if count[r.id] > 1 {
			continue
		}
		if r.n != lastN[r.item]+1 {
			outOfOrder++
		}
		lastN[r.item] = r.n
		if t, ok := firstSent[r.id]; ok {
			*toProcessed = append(*toProcessed, r.at.Sub(t))
		}
	}
	rerun, missing := 0, 0
	for _, u := range uniques {
		switch n := count[u.id]; {
		case n == 0:
			missing++
		case n > 1:
			rerun++
		}
	}
	if missing > 0 {
		problems = append(problems, fmt.Sprintf("%d deliveries answered 202 were never processed", missing))
	}
	if outOfOrder > 0 {
		problems = append(problems, fmt.Sprintf("%d deliveries were processed out of their item's order", outOfOrder))
	}
	return rerun, problems
}
