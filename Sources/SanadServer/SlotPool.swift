import Foundation
import SanadCore

/// A fixed number of generation slots (one loaded session each) and a bounded queue of requests waiting for one.
public final class SlotPool: @unchecked Sendable {  // `free` and `waiting` are guarded by `condition`
    public enum Acquired {
        case slot(any InferenceSession)
        /// Every slot is busy and the queue is full: answer 503.
        case queueFull
        /// The waiter gave up (its client left).
        case abandoned
    }

    public let total: Int
    public let queueCapacity: Int
    private let condition = NSCondition()
    private var free: [any InferenceSession]
    private var waiting = 0

    public init(sessions: [any InferenceSession], queueCapacity: Int) {
        self.free = sessions
        self.total = sessions.count
        self.queueCapacity = queueCapacity
    }

    /// A free slot, waiting in the queue while `abandon()` stays false.
    public func acquire(abandon: () -> Bool) -> Acquired {
        condition.lock()
        defer { condition.unlock() }
        if let s = free.popLast() { return .slot(s) }
        guard waiting < queueCapacity else { return .queueFull }
        waiting += 1
        defer { waiting -= 1 }
        while free.isEmpty {
            _ = condition.wait(until: Date().addingTimeInterval(0.1))
            if free.isEmpty && abandon() { return .abandoned }
        }
        return .slot(free.removeLast())
    }

    public func release(_ session: any InferenceSession) {
        condition.lock()
        free.append(session)
        condition.signal()
        condition.unlock()
    }

    /// Slots in use and requests waiting.
    public var load: (busy: Int, queued: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (total - free.count, waiting)
    }
}
