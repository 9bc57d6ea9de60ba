package ingress_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/ingress/loadgen"
)

// TestMain lets the test binary be a load server: the crash test starts it
// again as a child process (loadgen.StartChild) so that it can kill -9 a
// real server, with no test-only switch in the-loop's own CLI.
func TestMain(m *testing.M) {
	if loadgen.IsChild() {
		os.Exit(loadgen.ChildMain())
	}
	os.Exit(m.Run())
}

func TestEveryDeliveryAnswered202IsProcessedOnceAcrossAKill9(t *testing.T) {
	dir := t.TempDir()
	secret := []byte("crash-test")
	// Each Process call takes a while and fsyncs its record, so the kill
	// lands on deliveries being processed.
	srv, err := loadgen.StartChild([]string{os.Args[0], "-test.run=^$"}, loadgen.ServerConfig{
		Dir: dir, Secret: secret, Fsync: true, Delay: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := loadgen.Run(context.Background(), loadgen.Config{
		Deliveries: 600, Items: 20, Senders: 8, Secret: secret, KillAfter: 300, Timeout: time.Minute,
	}, srv, dir)
	stopErr := srv.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if !rep.Killed {
		t.Fatal("the server was not killed")
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if stopErr != nil {
		t.Errorf("the restarted server did not stop cleanly: %v", stopErr)
	}
}

// BenchmarkWebhookLoad is the load run of tools/loadwebhook against a
// server in this process: 5,000 signed deliveries for 50 items from 8
// goroutines, 10% duplicates. It reports the p50 and p99 times to the 202
// and to processed, in milliseconds.
func BenchmarkWebhookLoad(b *testing.B) {
	secret := []byte("bench")
	for b.Loop() {
		dir := b.TempDir()
		srv, err := loadgen.StartInProcess(loadgen.ServerConfig{Dir: dir, Secret: secret, Fsync: true})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := loadgen.Run(context.Background(), loadgen.Config{Secret: secret}, srv, dir)
		if err := srv.Stop(); err != nil {
			b.Fatal(err)
		}
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range rep.Problems {
			b.Error(p)
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(rep.ToAccepted.P50), "p50-202-ms")
		b.ReportMetric(ms(rep.ToAccepted.P99), "p99-202-ms")
		b.ReportMetric(ms(rep.ToProcessed.P50), "p50-processed-ms")
		b.ReportMetric(ms(rep.ToProcessed.P99), "p99-processed-ms")
	}
}
