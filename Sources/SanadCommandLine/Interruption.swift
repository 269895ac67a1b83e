import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGINT and SIGTERM: the first signal cancels the operation in progress (a generation, a chat reply) so the
/// command can finish cleanly — end the line, print statistics, exit 130 or return to the chat prompt; a second
/// signal during the same operation, or one when nothing cancellable runs, exits at once with status 130.
public final class Interruption: @unchecked Sendable {  // state behind `lock`
    public static let shared = Interruption()
    /// 128 + SIGINT, as shells report an interrupted command.
    public static let exitStatus: Int32 = 130

    private let lock = NSLock()
    private var cancel: (@Sendable () -> Void)?
    private var signalsDuringOperation = 0
    private var interruptedFlag = false
    private var sources: [any DispatchSourceSignal] = []

    /// Routes SIGINT and SIGTERM here (once per process).
    public func install() {
        lock.withLock {
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [weak self] in self?.received() }
                source.resume()
                sources.append(source)
            }
        }
    }

    private func received() {
        let action: (@Sendable () -> Void)? = lock.withLock {
            signalsDuringOperation += 1
            interruptedFlag = true
            return signalsDuringOperation == 1 ? cancel : nil
        }
        guard let action else {
            FileHandle.standardOutput.write(Data("\n".utf8))
            exit(Self.exitStatus)
        }
        action()
    }

    /// From now on the first signal calls `action` (a server's graceful stop) and a second one exits at once;
    /// installed before a server says it is listening, so no signal can fall between the two.
    public func handle(with action: @escaping @Sendable () -> Void) {
        install()
        lock.withLock {
            signalsDuringOperation = 0
            interruptedFlag = false
            cancel = action
        }
    }

    /// Whether a signal arrived during the last `run`.
    public var interrupted: Bool { lock.withLock { interruptedFlag } }

    /// Runs `operation` in a task that the first signal cancels. Returns its result, or throws its error
    /// (`CancellationError` or whatever the operation makes of its cancellation).
    public func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await operation() }
        lock.withLock {
            signalsDuringOperation = 0
            interruptedFlag = false
            cancel = { task.cancel() }
        }
        defer { lock.withLock { cancel = nil } }
        return try await task.value
    }
}
