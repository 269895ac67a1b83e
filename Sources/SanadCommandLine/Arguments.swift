import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A usage error: wrong flags or values. Printed as `Error: …`, `Usage: …`, `See 'sanad X --help'`; exit 64.
public struct UsageError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Exit codes, as `sanad --help` documents them.
public enum ExitCode {
    public static let success: Int32 = 0
    /// The command ran and failed (model missing, engine error, …).
    public static let failure: Int32 = 1
    /// A comparison or check found a difference (`sanad compare`).
    public static let mismatch: Int32 = 2
    /// Bad flags or arguments (BSD sysexits EX_USAGE, as swift-argument-parser uses).
    public static let usage: Int32 = 64
}

/// One subcommand of `sanad`.
public protocol SanadCommand {
    static var name: String { get }
    /// Other names that run it (`forms` for `form`).
    static var aliases: [String] { get }
    /// One line for `sanad --help`.
    static var summary: String { get }
    /// The full `--help` text: usage line, description, options.
    static var help: String { get }
    /// Parses `arguments` (everything after the subcommand name) and runs; returns the exit code.
    static func run(_ arguments: inout Arguments) async throws -> Int32
}

extension SanadCommand {
    public static var aliases: [String] { [] }
}

/// Hand-written argument parsing in swift-argument-parser's style: options are taken by name, what is left must be
/// positionals, and anything starting with `-` that nobody took is an error.
public struct Arguments {
    public private(set) var items: [String]
    public let command: String

    public init(_ items: [String], command: String) {
        self.items = items
        self.command = command
    }

    /// True when `--help`/`-h` is present.
    public var wantsHelp: Bool { items.contains("--help") || items.contains("-h") }

    /// Removes a boolean flag; true when it was present.
    public mutating func flag(_ names: String...) -> Bool {
        var found = false
        items.removeAll { item in
            if names.contains(item) {
                found = true
                return true
            }
            return false
        }
        return found
    }

    /// Removes `NAME VALUE` or `NAME=VALUE`; the last occurrence wins.
    public mutating func option(_ names: String...) throws -> String? {
        var value: String?
        var i = 0
        while i < items.count {
            let item = items[i]
            if names.contains(item) {
                guard i + 1 < items.count else { throw UsageError("missing value for '\(item)'") }
                value = items[i + 1]
                items.removeSubrange(i...(i + 1))
                continue
            }
            if let name = names.first(where: { item.hasPrefix($0 + "=") }) {
                value = String(item.dropFirst(name.count + 1))
                items.remove(at: i)
                continue
            }
            i += 1
        }
        return value
    }

    public mutating func int(_ names: String..., range: ClosedRange<Int>? = nil) throws -> Int? {
        guard let text = try optionAny(names) else { return nil }
        guard let v = Int(text) else { throw UsageError("'\(names[0])' expects an integer, got '\(text)'") }
        if let range, !range.contains(v) {
            throw UsageError("'\(names[0])' must be in \(range.lowerBound)…\(range.upperBound), got \(v)")
        }
        return v
    }

    public mutating func double(_ names: String...) throws -> Double? {
        guard let text = try optionAny(names) else { return nil }
        guard let v = Double(text), v.isFinite else {
            throw UsageError("'\(names[0])' expects a number, got '\(text)'")
        }
        return v
    }

    /// Comma-separated list option.
    public mutating func list(_ names: String...) throws -> [String]? {
        guard let text = try optionAny(names) else { return nil }
        return text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
    }

    private mutating func optionAny(_ names: [String]) throws -> String? {
        var value: String?
        for name in names {
            if let v = try option(name) { value = v }
        }
        return value
    }

    /// The remaining positionals; an unknown `-flag` is an error. `--` ends flags.
    public mutating func positionals(min: Int = 0, max: Int = Int.max, names: String = "arguments") throws -> [String] {
        var out: [String] = []
        var literal = false
        for item in items {
            if !literal && item == "--" {
                literal = true
                continue
            }
            if !literal && item.hasPrefix("-") && item.count > 1 && Double(item) == nil {
                throw UsageError("unknown option '\(item)'")
            }
            out.append(item)
        }
        items = []
        if out.count < min { throw UsageError("missing \(names)") }
        if out.count > max { throw UsageError("unexpected argument '\(out[max])'") }
        return out
    }

    /// Nothing may be left.
    public mutating func finish() throws {
        _ = try positionals(max: 0)
    }
}

/// Standard error output.
public func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes to stdout without a newline and flushes (for streaming).
public func writeOut(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

/// C's `stdout` stream. Swift 6 refuses to read the mutable C global directly; its value never changes, so it is
/// looked up once through the dynamic loader (RTLD_DEFAULT) and used for buffering and flushing only.
nonisolated(unsafe) public let cStandardOutput: UnsafeMutablePointer<FILE>? = dlsym(
    UnsafeMutableRawPointer(bitPattern: 0), "stdout")?.load(
        as: UnsafeMutablePointer<FILE>?.self)
