import Foundation

/// Runs the built `sanad` executable (it sits next to the test bundle in the build folder).
public enum SanadCLI {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// True when the process ended by a signal (a crash), not by exit.
        public var crashed: Bool
    }

    /// The `sanad` binary in the same build folder as the running tests.
    public static var executable: URL? {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("sanad")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs `sanad arguments…` with `stdin` text, in the package root, and waits.
    public static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
    ) throws -> Result {
        guard let executable else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "sanad binary not built"])
        }
        var env = ProcessInfo.processInfo.environment
        // A tuning run on this machine ('sanad tune' in the user's config folder) must not reorder the tests'
        // engines: unless a test names a folder, none is found.
        env["SANAD_TUNING_DIR"] =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("sanad-tests-no-tuning-\(getpid())").path
        for (k, v) in environment { env[k] = v }
        let r = try runChildProcess(
            executable, arguments, stdin: Data((stdin ?? "").utf8), environment: env, directory: TestPaths.packageRoot)
        return Result(
            status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self),
            stderr: String(decoding: r.stderr, as: UTF8.self), crashed: r.crashed)
    }
}
