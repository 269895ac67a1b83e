import Foundation

/// A private PostgreSQL server for one test: `initdb` into a temporary folder, `pg_ctl start` listening only on a
/// unix socket in that folder, `stop()` shuts it down and removes the folder. As root (PostgreSQL refuses to run
/// as root) the server runs as the `postgres` user through `runuser`.
final class PostgresServer {
    static let binaries = ProcessInfo.processInfo.environment["SANAD_PG_BIN"] ?? "/usr/lib/postgresql/15/bin"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: binaries + "/initdb") }

    let directory: URL
    var conninfo: String { "host=\(directory.path) dbname=postgres user=sanad connect_timeout=5" }

    init() throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("sanad-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        try Self.run(
            "initdb", ["-D", directory.path + "/data", "-A", "trust", "-U", "sanad", "--no-sync", "-E", "UTF8"])
        try start()
    }

    func start() throws {
        try Self.run(
            "pg_ctl",
            [
                "-D", directory.path + "/data", "-o", "-k \(directory.path) -c listen_addresses='' -F", "-l",
                directory.path + "/log", "-w", "start",
            ])
    }

    func stop() throws {
        try Self.run("pg_ctl", ["-D", directory.path + "/data", "-m", "fast", "-w", "stop"])
    }

    func destroy() {
        try? stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a PostgreSQL tool and waits for it with posix_spawn/waitpid (Foundation's `Process.waitUntilExit`
    /// missed the exit of `runuser` here). The server's own output goes to `log` in the folder.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let path = binaries + "/" + tool
        let argv = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", path] + arguments : [path] + arguments
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], nil, nil, &cArgs, environ)
        guard spawned == 0 else { throw NSError(domain: "postgres", code: Int(spawned)) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else {
            throw NSError(
                domain: "postgres", code: Int(status),
                userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments.joined(separator: " ")) failed"])
        }
    }
}
