package weigh

import (
	"net/netip"

	"github.com/cilium/statedb"
	"github.com/cilium/statedb/index"
)

var (
	uidIndex = statedb.Index[*Workload, string]{
		Name:       "uid",
		FromObject: func(w *Workload) index.KeySet { return index.NewKeySet(index.String(w.UID)) },
		FromKey:    index.String,
		Unique:     true,
	}
	namespaceIndex = statedb.Index[*Workload, string]{
		Name:       "namespace",
		FromObject: func(w *Workload) index.KeySet { return index.NewKeySet(index.String(w.Namespace)) },
		FromKey:    index.String,
		Unique:     false,
	}
	ipIndex = statedb.Index[*Workload, netip.Addr]{
		Name:       "ip",
		FromObject: func(w *Workload) index.KeySet { return index.NewKeySet(index.NetIPAddr(w.IP)) },
		FromKey:    index.NetIPAddr,
		Unique:     true,
	}
)

// StateDB holds the index in one statedb table with three indexes.
type StateDB struct {
	db    *statedb.DB
	table statedb.RWTable[*Workload]
}

func NewStateDB() *StateDB {
	db := statedb.New()
	tbl, err := statedb.NewTable(db, "workloads", uidIndex, namespaceIndex, ipIndex)
	if err != nil {
		panic(err)
	}
	return &StateDB{db: db, table: tbl}
}

// Apply inserts the batch in one write transaction and commits it.
func (s *StateDB) Apply(batch []*Workload) {
	txn := s.db.WriteTxn(s.table)
	defer txn.Abort() // no-op after Commit
	for _, w := range batch {
		if _, _, err := s.table.Insert(txn, w); err != nil {
			panic(err)
		}
	}
	txn.Commit()
}

func (s *StateDB) ByUID(uid string) (*Workload, bool) {
	w, _, ok := s.table.Get(s.db.ReadTxn(), uidIndex.Query(uid))
	return w, ok
}

func (s *StateDB) ByIP(ip netip.Addr) (*Workload, bool) {
	w, _, ok := s.table.Get(s.db.ReadTxn(), ipIndex.Query(ip))
	return w, ok
}

func (s *StateDB) ListNamespace(ns string, fn func(*Workload)) {
	for w := range s.table.List(s.db.ReadTxn(), namespaceIndex.Query(ns)) {
		fn(w)
	}
}
