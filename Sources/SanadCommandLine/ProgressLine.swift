import Foundation

/// A progress line on standard error for work that takes a while: done of total, a bar, the rate and the time left
/// (`embedding  1200/3000 [########------------]  40%  95.3 lines/s  ETA 19 s`).
///
/// On a terminal it redraws one line in place (at most ten times a second) and clears it when the work ends; piped,
/// it is silent unless asked for (`--progress`), and then prints a plain line at most once a second, so a log file
/// gets a readable trail. Nothing is shown before `delay` has passed (default 2 s, `SANAD_PROGRESS_DELAY` seconds
/// overrides it), so short work stays quiet. Results never go here: standard output stays clean.
public final class ProgressLine: @unchecked Sendable {  // mutable state behind `lock`; updates come from any thread
    /// How progress is shown.
    public enum Mode: Sendable, Equatable {
        /// Redrawn in place on a terminal.
        case terminal
        /// A plain line at most once a second (standard error is not a terminal and `--progress` was given).
        case lines
        /// Nothing.
        case off
    }

    public let mode: Mode
    private let label: String
    private let unit: String
    private let total: Int?
    private let delay: TimeInterval
    private let start = Date()
    private let lock = NSLock()
    private var lastDraw = Date.distantPast
    private var drawn = false
    private let write: @Sendable (String) -> Void

    /// `total` nil when it is not known (then no bar and no ETA).
    public init(
        _ label: String, total: Int?, unit: String, mode: Mode,
        delay: TimeInterval = ProgressLine.defaultDelay(),
        write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
    ) {
        self.label = label
        self.total = total
        self.unit = unit
        self.mode = mode
        self.delay = delay
        self.write = write
    }

    /// The mode a command gets: in place on a terminal, lines when `--progress` was given and standard error is
    /// not a terminal, else off.
    public static func mode(requested: Bool, standardErrorIsTerminal: Bool = isatty(STDERR_FILENO) == 1) -> Mode {
        standardErrorIsTerminal ? .terminal : requested ? .lines : .off
    }

    /// 2 s, or `SANAD_PROGRESS_DELAY` seconds.
    public static func defaultDelay(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> TimeInterval
    {
        environment["SANAD_PROGRESS_DELAY"].flatMap(Double.init).map { max(0, $0) } ?? 2
    }

    /// `done` units are finished.
    public func update(_ done: Int) {
        guard mode != .off else { return }
        let now = Date()
        lock.lock()
        defer { lock.unlock() }
        let elapsed = now.timeIntervalSince(start)
        guard elapsed >= delay, now.timeIntervalSince(lastDraw) >= (mode == .terminal ? 0.1 : 1) else { return }
        lastDraw = now
        drawn = true
        let text = ProgressLine.text(label: label, done: done, total: total, unit: unit, elapsed: elapsed)
        write(mode == .terminal ? "\r" + text + "\u{1B}[K" : text + "\n")
    }

    /// The work ended: a terminal's line is cleared, so what follows starts on a clean line.
    public func finish() {
        lock.lock()
        defer { lock.unlock() }
        if mode == .terminal && drawn { write("\r\u{1B}[K") }
        drawn = false
    }

    /// The line's text (without control characters).
    public static func text(label: String, done: Int, total: Int?, unit: String, elapsed: TimeInterval) -> String {
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        var parts = [label]
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let filled = Int((fraction * 20).rounded(.down))
            parts.append("\(done)/\(total)")
            parts.append("[" + String(repeating: "#", count: filled) + String(repeating: "-", count: 20 - filled) + "]")
            parts.append(String(format: "%3d%%", Int((fraction * 100).rounded(.down))))
        } else {
            parts.append("\(done)")
        }
        parts.append(String(format: "%.1f %@/s", rate, unit))
        if let total, rate > 0, done < total {
            parts.append("ETA " + duration(Double(total - done) / rate))
        }
        return parts.joined(separator: "  ")
    }

    /// `42 s`, `3 min 05 s`, `1 h 02 min`.
    public static func duration(_ seconds: TimeInterval) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min \(s % 60 < 10 ? "0" : "")\(s % 60) s" }
        return "\(s / 3600) h \(s % 3600 / 60 < 10 ? "0" : "")\(s % 3600 / 60) min"
    }
}
