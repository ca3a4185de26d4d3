package dlq

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/retrykit/retry/internal/argerr"
)

// defaultMemoryLimit is how many letters a memory queue holds when its
// limit is 0.
const defaultMemoryLimit = 10_000

// memory is the Queue NewMemory returns.
type memory struct {
	mu      sync.Mutex
	limit   int
	seq     uint64 // order of first put
	token   uint64 // last replay claim handed out
	letters map[string]*memLetter
}

type memLetter struct {
	seq   uint64
	rec   []byte
	e     entry  // what Summarize reads, so that it decodes only examples
	claim string // the token of the replay holding it; "" for none
}

// NewMemory returns an empty Queue in the process's memory, holding at most
// limit letters (0 means 10,000): beyond its limit Put fails with ErrFull
// rather than drop a letter. It keeps letters encoded, so it returns exactly
// what a durable queue would. Its letters
// die with the process: use it for tests, tools and jobs that a restart
// redelivers. It is safe for concurrent use.
func NewMemory(limit int) (Queue, error) {
	if limit < 0 {
		return nil, argerr.New("dlq.NewMemory", limit, "must not be negative (0 means 10,000)")
	}
	return &memory{limit: limit}, nil
}

func (m *memory) max() int {
	if m.limit == 0 {
		return defaultMemoryLimit
	}
	return m.limit
}

// check refuses a nil queue, a nil context and an empty id, before any
// work.
func (m *memory) check(method string, ctx context.Context, ids ...string) error {
	return checkCall("dlq.NewMemory."+method, m != nil, ctx, ids...)
}

// Put stores l (see Queue).
func (m *memory) Put(ctx context.Context, l Letter) (bool, error) {
	if err := m.check("Put", ctx); err != nil {
		return false, err
	}
	rec, err := Encode(l)
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.letters[l.ID]; ok {
		if e.claim == "" {
			return false, nil
		}
		e.rec, e.e, e.claim = rec, entryOf(l), "" // a new death during a replay
		return true, nil
	}
	if len(m.letters) >= m.max() {
		return false, fmt.Errorf("dlq: letter %s: %w (%d letters)", l.ID, ErrFull, m.max())
	}
	if m.letters == nil {
		m.letters = make(map[string]*memLetter)
	}
	m.seq++
	m.letters[l.ID] = &memLetter{seq: m.seq, rec: rec, e: entryOf(l)}
	return true, nil
}

// Get returns the letter id (see Queue).
func (m *memory) Get(ctx context.Context, id string) (Letter, error) {
	if err := m.check("Get", ctx, id); err != nil {
		return Letter{}, err
	}
	if err := ctx.Err(); err != nil {
		return Letter{}, err
	}
	m.mu.Lock()
	e, ok := m.letters[id]
	m.mu.Unlock()
	if !ok {
		return Letter{}, fmt.Errorf("dlq: letter %s: %w", id, ErrNotFound)
	}
	return decodeID(id, e.rec)
}

// List returns the letters f selects, oldest first (see Queue).
func (m *memory) List(ctx context.Context, f Filter) ([]Letter, error) {
	if err := m.check("List", ctx); err != nil {
		return nil, err
	}
	return m.scan(ctx, f, f.Offset, f.Limit)
}

// Count counts the letters f selects.
func (m *memory) Count(ctx context.Context, f Filter) (int, error) {
	if err := m.check("Count", ctx); err != nil {
		return 0, err
	}
	ls, err := m.scan(ctx, f, 0, 0)
	return len(ls), err
}

func (m *memory) scan(ctx context.Context, f Filter, offset, limit int) ([]Letter, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type rec struct {
		id  string
		seq uint64
		b   []byte
	}
	m.mu.Lock()
	recs := make([]rec, 0, len(m.letters))
	for id, e := range m.letters {
		recs = append(recs, rec{id, e.seq, e.rec}) // records are never mutated, only replaced
	}
	m.mu.Unlock()
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.seq, b.seq) })
	var out []Letter
	for _, r := range recs {
		l, err := decodeID(r.id, r.b)
		if err != nil {
			return nil, err
		}
		if !f.Match(l) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		out = append(out, l)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// Summarize adds up the letters f selects from what Put noted of each,
// decoding only each group's example (see Summarizer).
func (m *memory) Summarize(ctx context.Context, f Filter) (Summary, error) {
	if err := m.check("Summarize", ctx); err != nil {
		return Summary{}, err
	}
	if err := f.Validate(); err != nil {
		return Summary{}, err
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	type row struct {
		id  string
		seq uint64
		e   entry
		rec []byte
	}
	m.mu.Lock()
	rows := make([]row, 0, len(m.letters))
	for id, l := range m.letters {
		if l.e.match(f, id) {
			rows = append(rows, row{id, l.seq, l.e, l.rec})
		}
	}
	m.mu.Unlock()
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.seq, b.seq) })
	var a aggregate[row]
	for _, r := range rows {
		a.add(r.e, r)
	}
	return a.summary(func(r row) (Letter, error) { return decodeID(r.id, r.rec) })
}

// Replay hands the letter's job to to and removes the letter if to
// succeeded (see Queue and ReplayClaimed). Its claims never lapse.
func (m *memory) Replay(ctx context.Context, id string, to Enqueuer) error {
	if err := m.check("Replay", ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return ReplayClaimed(ctx, memClaims{m}, id, to)
}

// memClaims is the Claimer of a memory queue.
type memClaims struct{ m *memory }

func (c memClaims) Claim(_ context.Context, id string) (Claim, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	e, ok := c.m.letters[id]
	switch {
	case !ok:
		return Claim{}, fmt.Errorf("dlq: letter %s: %w", id, ErrNotFound)
	case e.claim != "":
		return Claim{}, fmt.Errorf("dlq: letter %s: %w", id, ErrClaimed)
	}
	c.m.token++
	e.claim = strconv.FormatUint(c.m.token, 10)
	return Claim{ID: id, Token: e.claim, Record: e.rec}, nil
}

// Ack removes the letter if the claim holds; a Put during the replay took
// the claim back with a new letter, which stays.
func (c memClaims) Ack(_ context.Context, cl Claim) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if e, ok := c.m.letters[cl.ID]; ok && e.claim == cl.Token {
		delete(c.m.letters, cl.ID)
	}
	return nil
}

func (c memClaims) Release(_ context.Context, cl Claim) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if e, ok := c.m.letters[cl.ID]; ok && e.claim == cl.Token {
		e.claim = ""
	}
	return nil
}

// Discard removes the letter id (see Queue).
func (m *memory) Discard(ctx context.Context, id string) error {
	if err := m.check("Discard", ctx, id); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.letters[id]
	switch {
	case !ok:
		return fmt.Errorf("dlq: letter %s: %w", id, ErrNotFound)
	case e.claim != "":
		return fmt.Errorf("dlq: letter %s: %w", id, ErrClaimed)
	}
	delete(m.letters, id)
	return nil
}

// Purge removes the letters f selects that no replay holds.
func (m *memory) Purge(ctx context.Context, f Filter) (int, error) {
	if err := m.check("Purge", ctx); err != nil {
		return 0, err
	}
	if err := f.Validate(); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, e := range m.letters {
		if e.claim != "" {
			continue
		}
		l, err := decodeID(id, e.rec)
		if err != nil {
			return n, err
		}
		if f.Match(l) {
			delete(m.letters, id)
			n++
		}
	}
	return n, nil
}

// decodeID decodes the record of letter id, naming it in the error.
func decodeID(id string, rec []byte) (Letter, error) {
	l, err := Decode(rec)
	if err != nil {
		return Letter{}, fmt.Errorf("dlq: letter %s: %w", id, err)
	}
	return l, nil
}
