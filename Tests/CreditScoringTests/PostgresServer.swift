import CreditReceiver
import Foundation
import SanadTestSupport

/// A private PostgreSQL server for one test: `initdb` into a temporary folder, `pg_ctl start` listening only on a
/// unix socket in that folder, `stop()` shuts it down and removes the folder. As root (PostgreSQL refuses to run
/// as root) the server runs as the `postgres` user through `runuser`.
final class PostgresServer {
    static let binaries = ProcessInfo.processInfo.environment["SANAD_PG_BIN"] ?? "/usr/lib/postgresql/15/bin"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: binaries + "/initdb") }

    let directory: URL
    /// The owner's connection (a superuser: `initdb -U sanad`).
    var conninfo: String { conninfo(user: "sanad") }

    /// A connection as `user` (trust authentication on the private socket).
    func conninfo(user: String) -> String { "host=\(directory.path) dbname=postgres user=\(user) connect_timeout=5" }
    /// What a device connects as, and what the receiver service connects as (after `installReceiver`).
    var device: String { conninfo(user: ReceiverSchema.deviceRole) }
    var receiver: String { conninfo(user: ReceiverSchema.receiverRole) }

    /// How many rows `table` holds (read as the owner).
    func count(_ table: String) throws -> Int {
        let rows = try PostgresConnection(conninfo, lib: LibPQ.shared()).query("SELECT count(*) FROM \(table)")
        return Int((rows.first?.first ?? nil) ?? "") ?? -1
    }

    /// The receiver's tables, roles, grants and functions, as `sanad credit receiver setup` makes them.
    func installReceiver() throws {
        try ReceiverSchema.install(on: PostgresConnection(conninfo, lib: LibPQ.shared()))
    }

    /// A new server; with `receiver`, the receiver's schema installed (`installReceiver`).
    init(receiver: Bool = false) throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("sanad-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        try Self.run(
            "initdb", ["-D", directory.path + "/data", "-A", "trust", "-U", "sanad", "--no-sync", "-E", "UTF8"])
        try start()
        if receiver { try installReceiver() }
    }

    /// A server with the receiver's schema, a signed fixture record and a receiver connection that enrolled the
    /// fixture's key.
    static func enrolledFixture() throws -> (PostgresServer, SignedFixture, CreditReceiver) {
        let server = try PostgresServer(receiver: true)
        let f = try SignedFixture()
        let receiver = try CreditReceiver(conninfo: server.receiver, crypto: f.lib)
        try receiver.register(publicKey: f.key.publicKey)
        return (server, f, receiver)
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

/// `sanad credit receiver serve --db RECEIVER-CONNINFO`: the receiver service as the separate process it is, its
/// output in a file; `stop()` sends SIGTERM and waits.
final class ReceiverProcess {
    let process = Process()
    let log: URL

    init(conninfo: String) throws {
        guard let executable = SanadCLI.executable else { throw ServerTestError("sanad binary not built") }
        process.executableURL = executable
        process.arguments = ["credit", "receiver", "serve", "--db", conninfo, "--interval-ms", "20"]
        log = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-receiver-\(UUID()).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        while !output.contains("receiver: serving") {
            guard process.isRunning else { throw ServerTestError("the receiver exited: \(output)") }
            usleep(20_000)
        }
    }

    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: log)
    }
}

/// A device's store and the fixture's messages, with `sanad credit` run against `conninfo` (SANAD_CREDIT_DB).
struct DeviceCLI {
    let data: URL
    let messages: URL
    let environment: [String: String]

    init(conninfo: String) throws {
        data = try CreditFixtures.temporaryDirectory()
        messages = data.appendingPathComponent("m.txt")
        try CreditFixtures.plain.write(to: messages, atomically: true, encoding: .utf8)
        environment = ["SANAD_DATA": data.path, "SANAD_CREDIT_DB": conninfo]
    }

    func credit(_ arguments: [String]) throws -> SanadCLI.Result {
        try SanadCLI.run(["credit"] + arguments, environment: environment)
    }
}
