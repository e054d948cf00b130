// Command repro shows rueidislock v1.0.79 leaving a lock's context live after the
// lock's keys have expired and another program holds the lock.
//
// A standalone reproduction: rueidislock's own Locker, as its README's example makes it
// (KeyMajority 1, "if you have only one Redis instance"), against a redis-server this
// program starts on a free loopback port and stops. No stockbench code. The README,
// "Features backed by the Redis Client Side Caching": "The returned `ctx` will be
// canceled automatically and immediately once the `KeyMajority` is not held anymore".
//
// Each trial starts a holder (this program again, in a process of its own) that takes
// the lock with TryWithContext and then checks ctx.Err() without pause, as code that
// asks "do I still hold it?" right before each write does. The program stops the
// holder (SIGSTOP, as a long GC pause, a VM's steal or a debugger would) before the
// library's first extension, waits past the key's validity, takes the lock itself with
// a second Locker (another program), and continues the holder (SIGCONT). The holder
// prints how long after it was continued its ctx still read live. It exits 1 when a
// holder's ctx read live after the second Locker held the lock, 0 when none did, 2
// when it could not run.
//
// Why (rueidislock/lock.go, v1.0.79): once the keys are acquired, try stops the timer
// that would cancel the ctx at the keys' deadline (canceltm.Stop()); after that the
// ctx is canceled only by the extension goroutine, when an extension fails, or by an
// invalidation followed by a failed extension: a round trip to Redis. The holder's
// own clock already says the deadline it wrote into SET PXAT has passed, but nothing
// checks it.
//
//	go run . [-trials 10] [-validity 500ms]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

const lockName = "my_lock"

func main() {
	trials := flag.Int("trials", 10, "holders stopped and continued, one after the other")
	validity := flag.Duration("validity", 500*time.Millisecond, "KeyValidity of both Lockers")
	holder := flag.String("holder", "", "(internal) run as the holder against this address")
	flag.Parse()
	if *holder != "" {
		os.Exit(hold(*holder, *validity))
	}
	os.Exit(run(*trials, *validity))
}

// run starts the server and the trials, and says what they showed.
func run(trials int, validity time.Duration) int {
	addr, stop, err := redisServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer stop()
	fmt.Printf("rueidislock v1.0.79, KeyMajority 1, KeyValidity %s, against redis-server on %s\n", validity, addr)
	shown := 0
	for i := 1; i <= trials; i++ {
		said, live, err := trial(addr, validity)
		if err != nil {
			fmt.Fprintf(os.Stderr, "trial %d: %v\n", i, err)
			return 2
		}
		if live {
			shown++
		}
		fmt.Printf("trial %d: the first holder's ctx read %s\n", i, said)
	}
	fmt.Printf("%d of %d trials: the first holder's ctx read live while the second Locker held the lock\n", shown, trials)
	if shown > 0 {
		return 1
	}
	return 0
}

// trial runs one holder; it returns what the holder printed once continued, and whether
// its ctx read live then, while the second Locker held the lock.
func trial(addr string, validity time.Duration) (said string, live bool, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", false, err
	}
	cmd := exec.Command(self, "-holder", addr, "-validity", validity.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", false, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", false, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "acquired" {
		return "", false, fmt.Errorf("the holder did not take the lock: %q", lines.Text())
	}
	// Stopped at once, well before its first extension at half the validity.
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return "", false, err
	}
	time.Sleep(validity + validity/2)

	other, err := locker(addr, validity)
	if err != nil {
		return "", false, err
	}
	defer other.Close()
	ctx, cancel, err := other.TryWithContext(context.Background(), lockName)
	if err != nil {
		return "", false, fmt.Errorf("the second Locker could not take the lock %s after the first took it: %w", validity+validity/2, err)
	}
	defer cancel()
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		return "", false, err
	}
	if !lines.Scan() {
		return "", false, errors.New("the holder said nothing after it was continued")
	}
	said = lines.Text()
	if ctx.Err() != nil {
		return "", false, errors.New("the second Locker's own ctx was canceled: it did not hold the lock throughout")
	}
	return said, strings.HasPrefix(said, "live "), nil
}

// hold takes the lock and checks its ctx without pause; once it finds its own clock
// jumped (it was stopped), it prints whether the ctx read live then, and for how long.
func hold(addr string, validity time.Duration) int {
	l, err := locker(addr, validity)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer l.Close()
	ctx, cancel, err := l.TryWithContext(context.Background(), lockName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "holder:", err)
		return 2
	}
	defer cancel()
	acquired := time.Now()
	fmt.Println("acquired")
	last := acquired
	for {
		now := time.Now()
		if now.Sub(last) < validity/2 {
			last = now
			continue
		}
		// Continued: the keys' deadline, acquired + validity, has passed.
		if ctx.Err() != nil {
			fmt.Printf("canceled when continued, %s after it took the lock\n", now.Sub(acquired).Round(time.Millisecond))
			return 0
		}
		for ctx.Err() == nil {
		}
		fmt.Printf("live when continued, %s after it took the lock (validity %s), and for %s more\n",
			now.Sub(acquired).Round(time.Millisecond), validity, time.Since(now).Round(time.Microsecond))
		return 0
	}
}

// locker is a Locker as the README's example makes one, for a single Redis instance.
func locker(addr string, validity time.Duration) (rueidislock.Locker, error) {
	return rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: []string{addr}},
		KeyMajority:  1,
		KeyValidity:  validity,
	})
}

// redisServer starts redis-server on a free loopback port, without persistence, and
// returns its address and how to stop it.
func redisServer() (string, func(), error) {
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	srv := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		return "", nil, fmt.Errorf("cannot start redis-server (apt-get install redis-server): %w", err)
	}
	stop := func() { srv.Process.Kill(); srv.Wait() }
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; i < 200; i++ {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return addr, stop, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("redis-server did not answer on %s", addr)
}
