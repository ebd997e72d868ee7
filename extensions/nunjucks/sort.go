package nunjucks

import "sort"

// jsSort sorts items in place as V8's Array.prototype.sort does, so that
// even a comparator that is not a total order (mixed types, NaN) gives
// Nunjucks' order: undefined values go last without being compared, and
// arrays shorter than 64 are sorted by TimSort's first run plus binary
// insertion, exactly as V8 sorts them. Longer arrays use a stable merge
// sort, which agrees with V8 whenever the comparator is consistent.
func jsSort(items []any, cmp func(a, b any) int) {
	var defined, undefs []any
	for _, it := range items {
		if isUndef(it) {
			undefs = append(undefs, it)
		} else {
			defined = append(defined, it)
		}
	}
	a := defined
	n := len(a)
	switch {
	case n < 2:
	case n < 64:
		run := countAndMakeRun(a, cmp)
		binaryInsertionSort(a, run, cmp)
	default:
		sort.SliceStable(a, func(i, j int) bool { return cmp(a[i], a[j]) < 0 })
	}
	copy(items, a)
	copy(items[len(a):], undefs)
}

// countAndMakeRun measures the leading ascending (or strictly descending,
// then reversed) run, as V8's TimSort does.
func countAndMakeRun(a []any, cmp func(a, b any) int) int {
	if len(a) < 2 {
		return len(a)
	}
	run := 2
	desc := cmp(a[1], a[0]) < 0
	prev := a[1]
	for i := 2; i < len(a); i++ {
		order := cmp(a[i], prev)
		if desc && order >= 0 || !desc && order < 0 {
			break
		}
		prev = a[i]
		run++
	}
	if desc {
		for i, j := 0, run-1; i < j; i, j = i+1, j-1 {
			a[i], a[j] = a[j], a[i]
		}
	}
	return run
}

func binaryInsertionSort(a []any, start int, cmp func(a, b any) int) {
	for ; start < len(a); start++ {
		left, right := 0, start
		pivot := a[start]
		for left < right {
			mid := left + (right-left)>>1
			if cmp(pivot, a[mid]) < 0 {
				right = mid
			} else {
				left = mid + 1
			}
		}
		copy(a[left+1:start+1], a[left:start])
		a[left] = pivot
	}
}
