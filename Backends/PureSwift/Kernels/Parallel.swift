import Foundation

/// Splits `0..<count` into at most `threads` contiguous chunks and runs `body` on each, concurrently when
/// `threads > 1`. For now this rides on `DispatchQueue.concurrentPerform`; a dedicated pool can replace it
/// without touching the callers.
@inline(__always)
public func parallelChunks(_ count: Int, threads: Int, _ body: (Range<Int>) -> Void) {
    let chunks = min(max(1, threads), count)
    if chunks <= 1 {
        if count > 0 { body(0..<count) }
        return
    }
    DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
        let start = count * chunk / chunks
        let end = count * (chunk + 1) / chunks
        if start < end { body(start..<end) }
    }
}

/// Like `parallelChunks`, but also tells each chunk its index (0..<threads) so it can use per-worker scratch.
@inline(__always)
public func parallelChunksIndexed(_ count: Int, threads: Int, _ body: (Int, Range<Int>) -> Void) {
    let chunks = min(max(1, threads), count)
    if chunks <= 1 {
        if count > 0 { body(0, 0..<count) }
        return
    }
    DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
        let start = count * chunk / chunks
        let end = count * (chunk + 1) / chunks
        if start < end { body(chunk, start..<end) }
    }
}
