import Foundation

/// Continuous batching's meeting point, for engines whose sessions share one model (the pure-Swift engine's
/// `SharedDecoder`, the llama engine's shared context): sessions that generate at the same time each bring one step
/// (the token they just sampled) and one forward pass runs the steps of all of them, so the weights are read once
/// for every stream and the tokens per second of all streams together grow with their number.
///
/// The first step to arrive while no pass runs leads: it waits, at most `gatherWindow`, until every stream of the
/// last two passes has its step in (a stream that is still generating comes back within one sampling step), runs
/// one pass for the steps that have arrived (at most `streams`), and wakes their callers. A stream that has stopped
/// generating delays the others once or twice by the window, then is no longer waited for; a lone stream never
/// waits. Work that needs the model to itself (a piece of a prompt, an edit of the cache) runs through `alone`,
/// between passes.
// @unchecked Sendable: the queue and flags are guarded by `condition`; `run` runs for one caller at a time
public final class SharedPasses<Step>: @unchecked Sendable {
    /// The most steps one pass takes.
    public let streams: Int
    /// How long a leading step waits for the other streams' steps.
    public let gatherWindow: TimeInterval
    private let run: ([Step]) throws -> Void
    private let condition = NSCondition()
    private var pending: [Entry] = []
    /// A pass or `alone` work is running, or a leader is gathering.
    private var busy = false
    /// The streams of the last pass, and of the last two.
    private var lastPass: Set<ObjectIdentifier> = []
    private var recent: Set<ObjectIdentifier> = []
    private var largest = 0

    private final class Entry {
        let step: Step
        let stream: ObjectIdentifier
        var done = false
        var failure: (any Error)?
        init(step: Step, stream: ObjectIdentifier) {
            self.step = step
            self.stream = stream
        }
    }

    /// `run` computes one pass (its steps in arrival order); what it throws is thrown to every step of the pass.
    public init(streams: Int, gatherWindow: TimeInterval = 0.002, run: @escaping ([Step]) throws -> Void) {
        self.streams = max(1, streams)
        self.gatherWindow = gatherWindow
        self.run = run
    }

    /// The largest pass so far, in steps.
    public var largestPass: Int {
        condition.lock()
        defer { condition.unlock() }
        return largest
    }

    /// Runs `body` while no pass runs (and no other `alone` work). Steps already waiting go first: a long prompt,
    /// run in pieces, lets the streams that are generating step between its pieces.
    public func alone<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        while busy || !pending.isEmpty { condition.wait() }
        busy = true
        condition.unlock()
        defer {
            condition.lock()
            busy = false
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    /// Adds `step` of `stream` (one identity per session) to the next pass and returns once that pass has run.
    public func join(_ step: Step, stream: ObjectIdentifier) throws {
        let entry = Entry(step: step, stream: stream)
        condition.lock()
        defer { condition.unlock() }
        pending.append(entry)
        condition.broadcast()  // a leader may be waiting for this step
        while !entry.done {
            if busy {
                condition.wait()
                continue
            }
            busy = true
            let deadline = Date().addingTimeInterval(gatherWindow)
            while !recentStepsArrived() && Date() < deadline { _ = condition.wait(until: deadline) }
            let pass = Array(pending.prefix(streams))
            pending.removeFirst(pass.count)
            condition.unlock()
            var failure: (any Error)?
            do { try run(pass.map(\.step)) } catch { failure = error }
            condition.lock()
            for e in pass {
                e.done = true
                e.failure = failure
            }
            let ids = Set(pass.map(\.stream))
            recent = ids.union(lastPass)
            lastPass = ids
            largest = max(largest, pass.count)
            busy = false
            condition.broadcast()
        }
        if let failure = entry.failure { throw failure }
    }

    /// Whether every stream of the last two passes has a step waiting (under the lock).
    private func recentStepsArrived() -> Bool {
        guard pending.count < streams else { return true }
        return recent.isSubset(of: Set(pending.map(\.stream)))
    }
}
