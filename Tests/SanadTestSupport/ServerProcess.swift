import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `sanad serve` child process on a port the kernel picked, read from its startup lines.
public final class ServerProcess {
    public let process = Process()
    public let port: Int
    public let stderrFile: URL

    /// Starts `sanad serve --port 0 arguments…` in the package root, with `environment` over the inherited one.
    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        guard let executable = SanadCLI.executable else { throw ServerTestError("sanad binary not built") }
        process.executableURL = executable
        process.arguments = ["serve", "--port", "0"] + arguments
        process.currentDirectoryURL = TestPaths.packageRoot
        var env = ProcessInfo.processInfo.environment
        env["SANAD_TUNING_DIR"] = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-no-tuning").path
        for (key, value) in environment { env[key] = value }
        process.environment = env
        stderrFile = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-serve-\(UUID()).err")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var text = ""
        while !text.contains("Ctrl-C") {
            let data = out.fileHandleForReading.availableData
            guard !data.isEmpty else {
                throw ServerTestError("sanad serve exited before listening: \(text) \(Self.read(stderrFile))")
            }
            text += String(decoding: data, as: UTF8.self)
        }
        // `listening on http://HOST:PORT` (HOST 127.0.0.1, 0.0.0.0, [::]…): connections go to loopback.
        guard let range = text.range(of: "listening on http://"),
            let colon = text[range.upperBound...].prefix(while: { $0 != " " && $0 != "\n" }).lastIndex(of: ":"),
            let port = Int(text[text.index(after: colon)...].prefix { $0.isNumber })
        else { throw ServerTestError("no port in: \(text)") }
        self.port = port
        startup = text
    }

    /// What it printed up to the line that says where it listens.
    public let startup: String

    public static func read(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
    public var stderr: String { Self.read(stderrFile) }

    /// SIGTERM (unless `signal` is false: one was sent already), then the exit status.
    @discardableResult
    public func stop(signal: Bool = true) -> Int32 {
        if signal, process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: stderrFile)
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

public struct ServerTestError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
