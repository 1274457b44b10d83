// Package intern shares equal label maps among the objects that hold them.
//
// Pods come in replica sets whose members carry the same labels; a
// registry that keeps one map per pod holds the same map many times over.
// A Maps hands out one Labels per distinct map for as long as some holder
// keeps it, and forgets it once none does: it holds its entries weakly,
// so it needs no release call and never grows past the maps in use.
//
// A map given to Labels is owned by the Maps from then on, and no map it
// hands out may be written: maps are shared by value, not copied.
package intern
