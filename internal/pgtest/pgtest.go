// Package pgtest starts a real PostgreSQL server for tests, on a free
// loopback port, in a fresh temporary directory, with trust authentication
// and durability off (fsync, synchronous_commit and full-page writes: a test
// server needs no crash safety of its own). It runs the server binaries
// (initdb, postgres, createdb) and needs no PostgreSQL client library.
//
// One server serves a whole test package: the first call of DB starts it
// (initdb and start-up: about a second), and Main stops it when the
// package's tests end; the server is the test process's child and dies with
// it, should the process die first. Each test gets a fresh database, created
// from template0 by createdb (a fraction of a second), so tests do not see
// each other's rows.
//
// Proxy (a fault proxy, package faultproxy) stands between a client and the
// server and loses the reply to a COMMIT on demand: the ambiguous commit,
// made deterministic. Its other faults (latency, a black hole, a reset in
// the middle of a reply, refused connections) serve outage tests.
//
// The binaries are looked for on PATH, then in Debian's
// /usr/lib/postgresql/<version>/bin (newest version first). Without them a
// test that needs a server is skipped with a message; with
// RETRY_REQUIRE_POSTGRES=1 (set by .ci/run, which installs them) it fails
// instead, so that CI can never pass by skipping.
//
// initdb refuses to run as root. When the tests run as root, the server runs
// as the unprivileged user "postgres" (which Debian's package creates), in a
// directory that user owns.
package pgtest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns missing PostgreSQL
// binaries into a test failure.
const RequireEnv = "RETRY_REQUIRE_POSTGRES"

// Server is a running PostgreSQL server.
type Server struct {
	Host string // "127.0.0.1"
	Port int
	bin  string // the directory of the binaries
	dir  string // the temporary directory: data, socket, log
	cred *syscall.Credential
	cmd  *exec.Cmd    // the postmaster
	n    atomic.Int64 // databases created
}

var shared struct {
	sync.Mutex
	srv *Server
	err error
}

// Main runs a package's tests and then stops the server that DB started, if
// any. Use it in TestMain, inside goleak's check if the package has one:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
func Main(m interface{ Run() int }) interface{ Run() int } { return runner{m} }

type runner struct{ m interface{ Run() int } }

func (r runner) Run() int {
	code := r.m.Run()
	shared.Lock()
	defer shared.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
		shared.srv = nil
	}
	return code
}

// DB returns the URL of a fresh, empty database on the package's server,
// starting the server on first use. The test is skipped (or fails, with
// RETRY_REQUIRE_POSTGRES=1) when the binaries are missing.
func DB(t testing.TB) string {
	t.Helper()
	srv := Shared(t)
	u, err := srv.CreateDB()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// Shared returns the package's server, starting it on first use.
func Shared(t testing.TB) *Server {
	t.Helper()
	bin, err := Binaries()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("PostgreSQL server binaries not found and %s=1: %v", RequireEnv, err)
		}
		t.Skipf("PostgreSQL server binaries not found (install them, e.g. apt-get install postgresql; %s=1 makes this a failure): %v", RequireEnv, err)
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = Launch(bin)
	}
	if shared.err != nil {
		t.Fatalf("pgtest: PostgreSQL did not start: %v", shared.err)
	}
	return shared.srv
}

// Binaries returns the directory holding initdb, postgres and createdb: the
// one of initdb on PATH, else the newest /usr/lib/postgresql/<version>/bin.
func Binaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if dir := filepath.Dir(p); isFile(filepath.Join(dir, "postgres")) && isFile(filepath.Join(dir, "createdb")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		if isFile(filepath.Join(dir, "initdb")) && isFile(filepath.Join(dir, "postgres")) && isFile(filepath.Join(dir, "createdb")) {
			return dir, nil
		}
	}
	return "", errors.New("no initdb on PATH or in /usr/lib/postgresql/*/bin")
}

func isFile(p string) bool { fi, err := os.Stat(p); return err == nil && !fi.IsDir() }

// version reads the major version out of /usr/lib/postgresql/<version>/bin.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Launch starts a server outside a test — for a program that needs a
// PostgreSQL of its own, as examples/sql-transfer does — with the binaries
// in bin (see Binaries). The caller stops it with Stop, which also removes
// its files.
func Launch(bin string) (*Server, error) {
	s := &Server{Host: "127.0.0.1", bin: bin}
	if err := s.makeDir(); err != nil {
		return nil, err
	}
	if err := s.run("initdb", "-D", s.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C"); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	var err error
	for range 3 { // a free port can be taken between choosing it and binding it
		if s.Port, err = freePort(); err != nil {
			break
		}
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	os.RemoveAll(s.dir)
	return nil, err
}

// makeDir creates the server's directory, owned by the postgres user when
// running as root (initdb refuses root, and postgres must own its data).
func (s *Server) makeDir() error {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return err
	}
	s.dir = dir
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("running as root, and there is no unprivileged postgres user to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return os.Chown(dir, uid, gid)
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// start runs the postgres server on s.Port and waits until it accepts
// connections. The server is this process's child, and dies with it
// (Pdeathsig): a test binary that panics leaves no server behind.
func (s *Server) start() error {
	log, err := os.Create(filepath.Join(s.dir, "log"))
	if err != nil {
		return err
	}
	defer log.Close()
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.data(),
		"-p", strconv.Itoa(s.Port), "-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+s.dir, "-c", "fsync=off",
		"-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.Env = append(cleanEnv(), "LC_ALL=C")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	if err := s.waitReady(30 * time.Second); err != nil {
		s.kill()
		text, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("%w; log:\n%s", err, text)
	}
	return nil
}

// waitReady waits until the server says in postmaster.pid that it is ready
// (what pg_ctl -w waits for), or until it exits.
func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if b, err := os.ReadFile(filepath.Join(s.data(), "postmaster.pid")); err == nil {
			if lines := strings.Split(string(b), "\n"); len(lines) > 7 && strings.TrimSpace(lines[7]) == "ready" {
				return nil
			}
		}
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(s.cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid > 0 {
			s.cmd = nil // reaped
			return fmt.Errorf("postgres exited: %v", ws)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready within %v", limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// kill stops the server at once (SIGQUIT: immediate shutdown) and reaps it.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// run runs one of the server binaries, as the postgres user when root.
func (s *Server) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(cleanEnv(), "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}

// Stop stops the server at once (immediate shutdown) and removes its files.
func (s *Server) Stop() {
	s.kill()
	os.RemoveAll(s.dir)
}

// URL returns the connection URL of database db on the server, as the
// superuser postgres.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"),
		Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// CreateDB creates a fresh database and returns its URL.
func (s *Server) CreateDB() (string, error) {
	name := "t" + strconv.FormatInt(s.n.Add(1), 10)
	err := s.run("createdb", "-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", "postgres", "-T", "template0", name)
	if err != nil {
		return "", err
	}
	return s.URL(name), nil
}

// cleanEnv is the environment without the PG* variables, which would
// otherwise point the binaries at some other server.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
