// The merge loop SentencePiece and byte-level BPE share, as llama.cpp's tokenizer sessions run it: the text starts as
// one symbol per UTF-8 character in a linked list; the best merge of two neighbours is taken from a heap, joined,
// and its new neighbours are offered; a queued merge whose sides changed since is skipped.

/// A run of the text being merged (llama.cpp's `llm_symbol`).
struct MergeSymbol {
    var start: Int32
    /// Bytes; 0 once merged into the symbol on its left.
    var count: Int32
    var prev: Int32
    var next: Int32
    /// What the tokenizer knows the run as (BPE: its entry in the strings, -1 when none).
    var string: Int32
}

/// A merge of two neighbouring symbols that a tokenizer offers: the heap pops the one that `precedes` the others.
protocol MergeCandidate: HeapElement {
    var left: Int32 { get }
    var right: Int32 { get }
    /// The bytes of both sides when it was offered.
    var size: Int32 { get }
}

/// One symbol per UTF-8 character of `text` (a sequence cut short at the end is one symbol), linked in order, each
/// with `string` of its bytes.
func characterSymbols(
    _ text: UnsafeBufferPointer<UInt8>, string: (UnsafeBufferPointer<UInt8>) -> Int32 = { _ in -1 }
) -> [MergeSymbol] {
    var symbols: [MergeSymbol] = []
    symbols.reserveCapacity(text.count)
    var offset = 0
    while offset < text.count {
        let length = min(utf8SequenceLength(text[offset]), text.count - offset)
        let index = Int32(symbols.count)
        symbols.append(
            MergeSymbol(
                start: Int32(offset), count: Int32(length), prev: index - 1,
                next: offset + length == text.count ? -1 : index + 1,
                string: string(UnsafeBufferPointer(rebasing: text[offset..<offset + length]))))
        offset += length
    }
    return symbols
}

/// Merges `symbols` until no offered merge is left: `propose` gives the merge of two neighbours (nil: they do not
/// merge), `apply` records the merge on the symbol that absorbs its right neighbour.
func mergeSymbols<Candidate: MergeCandidate>(
    _ symbols: inout [MergeSymbol], propose: ([MergeSymbol], _ left: Int32, _ right: Int32) -> Candidate?,
    apply: (inout MergeSymbol, Candidate) -> Void = { _, _ in }
) {
    var queue = BinaryHeap<Candidate>()
    func offer(_ left: Int32, _ right: Int32) {
        guard left >= 0, right >= 0, let candidate = propose(symbols, left, right) else { return }
        queue.push(candidate)
    }
    for i in 1..<max(symbols.count, 1) { offer(Int32(i - 1), Int32(i)) }

    while let candidate = queue.pop() {
        let l = Int(candidate.left)
        let r = Int(candidate.right)
        // Stale: one side was merged away or grew since the pair was queued.
        guard symbols[l].count > 0, symbols[r].count > 0, symbols[l].count + symbols[r].count == candidate.size
        else { continue }
        symbols[l].count += symbols[r].count
        apply(&symbols[l], candidate)
        symbols[r].count = 0
        symbols[l].next = symbols[r].next
        if symbols[r].next >= 0 { symbols[Int(symbols[r].next)].prev = candidate.left }
        offer(symbols[l].prev, candidate.left)
        offer(candidate.left, symbols[l].next)
    }
}

/// An element of `BinaryHeap`: `precedes` is true when `a` must pop before `b`.
protocol HeapElement {
    static func precedes(_ a: Self, _ b: Self) -> Bool
}

/// A binary heap popping the element that precedes all others.
struct BinaryHeap<Element: HeapElement> {
    private var items: [Element] = []

    var isEmpty: Bool { items.isEmpty }

    mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Element.precedes(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Element? {
        guard let last = items.popLast() else { return nil }
        guard !items.isEmpty else { return last }
        let top = items[0]
        items[0] = last
        var parent = 0
        let count = items.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { break }
            var best = left
            let right = left + 1
            if right < count && Element.precedes(items[right], items[left]) { best = right }
            guard Element.precedes(items[best], items[parent]) else { break }
            items.swapAt(best, parent)
            parent = best
        }
        return top
    }
}
