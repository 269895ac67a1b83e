import Foundation
import SanadCore

/// An error a plugin reports about its options or its data files, naming the file, the key and the fix.
public enum PluginError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An option in the host config is unknown, of the wrong type or out of range.
    case invalidOption(plugin: String, configFile: String?, key: String, problem: String)
    /// A data file the plugin reads is missing or invalid; `keyPath` is like `documents[2].expiryDate`.
    case invalidData(plugin: String, file: String, keyPath: String, problem: String)

    public var description: String {
        switch self {
        case .invalidOption(let plugin, let configFile, let key, let problem):
            return "\(configFile.map { $0 + ": " } ?? "")plugin '\(plugin)': option '\(key)': \(problem)"
        case .invalidData(let plugin, let file, let keyPath, let problem):
            return "plugin '\(plugin)': \(file)\(keyPath.isEmpty ? "" : ": " + keyPath): \(problem)"
        }
    }
}

/// Reads a plugin's `options` from the host config strictly (`OptionReader`): an unknown key or a wrong type is an
/// error naming the config file, the plugin, the key and the valid keys.
public struct PluginOptions: Sendable {
    public let plugin: String
    public let context: PluginContext
    private let reader: OptionReader

    /// Fails when `context.options` has a key that is not in `allowed`.
    public init(plugin: String, context: PluginContext, allowed: [String]) throws {
        self.plugin = plugin
        self.context = context
        let configFile = context.configFile?.path
        reader = try OptionReader(context.options, allowed: allowed) { key, problem in
            PluginError.invalidOption(plugin: plugin, configFile: configFile, key: key, problem: problem)
        }
    }

    /// The error for option `key` (naming the config file, the plugin and the key) with `problem`.
    public func fail(_ key: String, _ problem: String) -> any Error { reader.failure(key, problem) }

    public func string(_ key: String) throws -> String? { try reader.string(key) }

    public func int(_ key: String, range: ClosedRange<Int>) throws -> Int? { try reader.int(key, range: range) }

    /// A file path option; a relative path is taken relative to the config file's folder (or the working directory
    /// when there is no config file). The file must exist.
    public func file(_ key: String) throws -> URL? {
        guard let path = try string(key) else { return nil }
        guard !path.isEmpty else { throw fail(key, "is empty; give the path of a file") }
        let url: URL
        if path.hasPrefix("/") {
            url = URL(fileURLWithPath: path)
        } else if let config = context.configFile {
            url = config.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
        } else {
            url = URL(fileURLWithPath: path).standardizedFileURL
        }
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw fail(key, "the file \(url.path) does not exist (relative paths are taken from the config's folder)")
        }
        return url
    }

    /// A time zone identifier option (`Asia/Riyadh`).
    public func timeZone(_ key: String) throws -> TimeZone? {
        guard let name = try string(key) else { return nil }
        guard let zone = TimeZone(identifier: name) else {
            throw fail(key, "'\(name)' is not a time zone identifier such as Asia/Riyadh")
        }
        return zone
    }
}

extension PluginOptions {
    /// A required file path option (see `file(_:)`); when it is missing the error names the key and `hint` (what
    /// to put there).
    public func requiredFile(_ key: String, hint: String) throws -> URL {
        guard let url = try file(key) else { throw fail(key, "missing; \(hint)") }
        return url
    }
}
