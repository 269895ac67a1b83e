import CreditReceiver
import CreditScoringPlugin
import Foundation
import SanadCommandLine
import SanadCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sanad credit receiver VERB`: the receiving party's commands, run by the operator beside the database with the
/// receiver's (or, for `setup`, the owner's) credentials — never with a device's. Its usage is part of `sanad
/// credit --help`.
public struct ReceiverVerb: CommandVerb {
    public static let name = "receiver"
    static let verbs: [any CommandVerb.Type] = [Setup.self, Serve.self, Enroll.self, Prune.self]
    let chosen: any CommandVerb

    public init(parsing arguments: inout Arguments) throws {
        let names = Self.verbs.map { $0.name }.joined(separator: ", ")
        guard let word = arguments.items.first, !word.hasPrefix("-") else {
            throw UsageError("'receiver' needs one of: \(names) ('sanad credit receiver serve --db CONNINFO')")
        }
        guard let verb = Self.verbs.first(where: { $0.name == word }) else {
            throw UsageError("unknown receiver subcommand '\(word)' (\(names))")
        }
        var rest = Arguments(Array(arguments.items.dropFirst()), command: "\(arguments.command) \(word)")
        chosen = try verb.init(parsing: &rest)
    }

    public func run() async throws -> Int32 { try await chosen.run() }

    /// `--db CONNINFO`, else `SANAD_RECEIVER_DB`; required.
    static func database(_ arguments: inout Arguments, role: String) throws -> String {
        let env = ProcessInfo.processInfo.environment["SANAD_RECEIVER_DB"].flatMap { $0.isEmpty ? nil : $0 }
        guard let db = try arguments.option("--db") ?? env else {
            throw UsageError("missing --db CONNINFO (or SANAD_RECEIVER_DB): a connection as \(role)")
        }
        return db
    }

    /// `setup --db ADMIN-CONNINFO`: roles, tables, grants and the two device functions (idempotent).
    struct Setup: CommandVerb {
        static let name = "setup"
        let db: String

        init(parsing arguments: inout Arguments) throws {
            db = try ReceiverVerb.database(&arguments, role: "the database owner")
            try arguments.finish()
        }

        func run() async throws -> Int32 {
            let connection = try PostgresConnection(
                CreditReceiver.withTimeouts(db, seconds: CreditReceiver.defaultTimeout), lib: try LibPQ.shared())
            let count = try ReceiverSchema.install(on: connection)
            print(
                "receiver database ready (\(count) statements): devices log in as \(ReceiverSchema.deviceRole) "
                    + "(may only call credit_submit and credit_submission), the service as "
                    + "\(ReceiverSchema.receiverRole); give each a password or a pg_hba.conf rule")
            return ExitCode.success
        }
    }

    /// `serve --db RECEIVER-CONNINFO`: the receiver service, a process of its own.
    struct Serve: CommandVerb {
        static let name = "serve"
        let db: String
        let intervalMilliseconds: Int
        let retentionDays: Int?
        let once: Bool

        init(parsing arguments: inout Arguments) throws {
            db = try ReceiverVerb.database(&arguments, role: ReceiverSchema.receiverRole)
            intervalMilliseconds = try arguments.int("--interval-ms", range: 10...60_000) ?? 100
            retentionDays = try arguments.int("--retention-days", range: 1...36500)
            once = arguments.flag("--once")
            try arguments.finish()
        }

        func run() async throws -> Int32 {
            Interruption.shared.handle {}
            let lib = try LibCrypto.shared()
            var receiver = try CreditReceiver(conninfo: db, crypto: lib)
            say(
                "receiver: serving \(ReceiverSchema.channel), polling every \(intervalMilliseconds) ms"
                    + (retentionDays.map { ", keeping records \($0) days" } ?? ""))
            var lastPrune = Date.distantPast
            while !Interruption.shared.interrupted {
                do {
                    if let days = retentionDays, Date().timeIntervalSince(lastPrune) >= 3600 {
                        say("pruned \(try receiver.prune(olderThanDays: days)) record(s) older than \(days) days")
                        lastPrune = Date()
                    }
                    if let outcome = try receiver.processNext() {
                        say(Self.describe(outcome))
                        continue
                    }
                    if once { break }
                } catch {
                    // A lost connection: say so, wait, connect again; the submissions wait in their table.
                    say("receiver: \(error); connecting again in 1 s")
                    sleep(1)
                    if let again = try? CreditReceiver(conninfo: db, crypto: lib) { receiver = again }
                    continue
                }
                usleep(UInt32(intervalMilliseconds) * 1000)
            }
            say("receiver: stopped")
            return ExitCode.success
        }

        static func describe(_ outcome: CreditReceiver.Outcome) -> String {
            switch outcome {
            case .stored(let c):
                return
                    "stored \(c.recordID) as id \(c.id)\(c.newlyStored ? "" : " (already stored)"), digest \(c.digest)"
            case .rejected(let r): return "rejected (\(r.reason)) key \(r.keyID ?? "?"), digest \(r.digest ?? "?")"
            case .erased(let key, let count): return "erased \(count) record(s) of key \(key) at its request"
            }
        }

        /// One line on standard output, unbuffered (a log reader sees it at once).
        func say(_ line: String) { writeOut(line + "\n") }
    }

    /// `enroll PUBLIC-KEY --db RECEIVER-CONNINFO`: the operator registers a device's public key.
    struct Enroll: CommandVerb {
        static let name = "enroll"
        let db: String
        let publicKey: [UInt8]

        init(parsing arguments: inout Arguments) throws {
            db = try ReceiverVerb.database(&arguments, role: ReceiverSchema.receiverRole)
            guard let hex = try arguments.positionals(max: 1, names: "PUBLIC-KEY").first else {
                throw UsageError("missing PUBLIC-KEY (64 hex digits: 'sanad credit status' on the device shows it)")
            }
            guard let key = Hex.decode(hex), key.count == 32 else {
                throw UsageError("PUBLIC-KEY '\(hex)' is not 64 hex digits (an Ed25519 public key)")
            }
            publicKey = key
        }

        func run() async throws -> Int32 {
            let lib = try LibCrypto.shared()
            let id = try CreditReceiver(conninfo: db, crypto: lib).register(publicKey: publicKey)
            print("enrolled device key \(id)")
            return ExitCode.success
        }
    }

    /// `prune --days N --db RECEIVER-CONNINFO`: retention.
    struct Prune: CommandVerb {
        static let name = "prune"
        let db: String
        let days: Int

        init(parsing arguments: inout Arguments) throws {
            let env = ProcessInfo.processInfo.environment["SANAD_CREDIT_RETENTION_DAYS"].flatMap { Int($0) }
            guard let days = try arguments.int("--days", range: 1...36500) ?? env else {
                throw UsageError(
                    "missing --days N (or SANAD_CREDIT_RETENTION_DAYS): records received more than N days ago go")
            }
            guard (1...36500).contains(days) else {
                throw UsageError("SANAD_CREDIT_RETENTION_DAYS must be 1…36500, not \(days)")
            }
            self.days = days
            db = try ReceiverVerb.database(&arguments, role: ReceiverSchema.receiverRole)
            try arguments.finish()
        }

        func run() async throws -> Int32 {
            let removed = try CreditReceiver(conninfo: db, crypto: try LibCrypto.shared()).prune(olderThanDays: days)
            print("pruned \(removed) record(s) received more than \(days) days ago")
            return ExitCode.success
        }
    }
}
