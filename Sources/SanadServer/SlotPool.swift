import Foundation

/// A fixed number of generation slots (in the server, one loaded session each) and a bounded queue of requests waiting for one.
public final class SlotPool<Slot: Sendable>: @unchecked Sendable {  // `free` and `queue` are guarded by `condition`
    public enum Acquired {
        case slot(Slot)
        /// Every slot is busy and the queue is full: answer 503.
        case queueFull
        /// The waiter gave up (its client left).
        case abandoned
    }

    public let total: Int
    public let queueCapacity: Int
    /// Every slot, in the order given (slot `id` is the index).
    public let slots: [Slot]
    private let condition = NSCondition()
    private var free: [Slot]
    /// Tickets of the requests waiting, oldest first.
    private var queue: [UInt64] = []
    private var nextTicket: UInt64 = 0

    public init(_ slots: [Slot], queueCapacity: Int) {
        self.free = slots
        self.slots = slots
        self.total = slots.count
        self.queueCapacity = queueCapacity
    }

    /// A free slot, waiting in the queue (first come, first served) while `abandon()` stays false.
    public func acquire(abandon: () -> Bool) -> Acquired {
        condition.lock()
        defer { condition.unlock() }
        if queue.isEmpty, let s = free.popLast() { return .slot(s) }
        guard queue.count < queueCapacity else { return .queueFull }
        nextTicket &+= 1
        let ticket = nextTicket
        queue.append(ticket)
        defer {
            queue.removeAll { $0 == ticket }
            condition.broadcast()
        }
        while free.isEmpty || queue.first != ticket {
            _ = condition.wait(until: Date().addingTimeInterval(0.1))
            if (free.isEmpty || queue.first != ticket) && abandon() { return .abandoned }
        }
        return .slot(free.removeLast())
    }

    public func release(_ slot: Slot) {
        condition.lock()
        free.append(slot)
        condition.broadcast()
        condition.unlock()
    }

    /// Slots in use and requests waiting.
    public var load: (busy: Int, queued: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (total - free.count, queue.count)
    }
}

extension SlotPool {
    /// Whether each slot (by id, the order given) is lent out now; `identity` tells slots apart.
    public func busySlots(identity: (Slot) -> ObjectIdentifier) -> [Bool] {
        condition.lock()
        defer { condition.unlock() }
        let idle = Set(free.map(identity))
        return slots.map { !idle.contains(identity($0)) }
    }
}
