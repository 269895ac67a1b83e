import Synchronization
import Testing

@testable import PureSwiftKernels

// The fork/join helpers the engine's loops run on: every index visited once, pieces cut where asked.

/// The ranges `run` hands its body, gathered under a lock (the body runs on several threads).
private func ranges(_ run: ((Range<Int>) -> Void) -> Void) -> [Range<Int>] {
    let seen = Mutex<[Range<Int>]>([])
    run { range in seen.withLock { $0.append(range) } }
    return seen.withLock { $0 }.sorted { $0.lowerBound < $1.lowerBound }
}

@Test(arguments: [(0, 2, 16, 8), (7, 2, 16, 8), (640, 2, 16, 8), (1536, 2, 6, 8), (1000, 3, 5, 1), (4096, 2, 16, 8)])
func parallelPiecesCoverEveryIndexOnce(count: Int, threads: Int, pieces: Int, granularity: Int) {
    let cut = ranges { body in
        parallelPieces(count, threads: threads, pieces: pieces, granularity: granularity, body)
    }
    // Contiguous, in order, covering 0..<count exactly once.
    #expect(cut.reduce(0) { end, range in range.lowerBound == end ? range.upperBound : -1 } == count)
    #expect(cut.count <= max(pieces, threads))
    // Every piece but the last a multiple of the granularity, so a kernel's tiles of rows are not split.
    for range in cut.dropLast() { #expect(range.count % granularity == 0) }
    if count >= pieces * granularity { #expect(cut.count == max(pieces, threads)) }
}

@Test func parallelRowsSplitsPromptsAndKeepsSmallStepsOnTheCaller() {
    let prompt = ranges { body in parallelRows(512, width: 640, threads: 2, body) }
    #expect(prompt == [0..<256, 256..<512])
    let token = ranges { body in parallelRows(1, width: 640, threads: 2, body) }
    #expect(token == [0..<1])
}

@Test func productPiecesKeepPiecesLongForPromptsAndOnePerThreadForTokens() {
    #expect(productPieces(rows: 4096, batch: 512, threads: 2) == 16)
    #expect(productPieces(rows: 1536, batch: 512, threads: 2) == 6)
    #expect(productPieces(rows: 640, batch: 512, threads: 2) == 2)
    #expect(productPieces(rows: 4096, batch: 1, threads: 2) == 2)
}
