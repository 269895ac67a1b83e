import Foundation
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sanad credit` from a pipe: analyse, a signed record that verifies, a tampered one that does not, usage errors.
@Suite("sanad credit", .enabled(if: SanadCLI.executable != nil))
struct CreditCLITests {
    static let messages = """
        2024-03-01T10:15 | Mom | Good morning habibi
        2024-03-01T10:20 | me | Thanks mom, love you
        2024-03-02T09:05 | me | I promise I will pay the loan tomorrow
        2024-03-03T12:00 | me | Paid, I transferred the money

        """

    static func temporary() -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-credit-cli-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    @Test("usage errors exit 64; --help exits 0")
    func usage() throws {
        #expect(try SanadCLI.run(["credit", "--help"]).stdout.hasPrefix("Usage: sanad credit"))
        let env = ["SANAD_DATA": Self.temporary()]
        for args in [[], ["frobnicate"], ["history", "--skip-bad"], ["analyze", "--scope", "some"], ["verify"]] {
            let r = try SanadCLI.run(["credit"] + args, environment: env)
            #expect(r.status == 64, "\(args): \(r.stderr)")
        }
    }

    @Test("analyze from a pipe writes a signed record that verifies; a changed byte does not")
    func analyzeAndVerify() throws {
        let dir = Self.temporary()
        let env = ["SANAD_DATA": dir]
        let r = try SanadCLI.run(
            ["credit", "analyze", "--consent", "-", "--json", "--out", dir + "/r.json"], stdin: Self.messages,
            environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let out = try JSONValue.parse(r.stdout)
        #expect(out["record"]?["counts"]?["promisesKept"]?.intValue == 1)
        #expect(out["traitsNote"]?.stringValue?.contains("not a validated psychometric instrument") == true)
        #expect(out["record"]?["settings"]?["contactsSHA256"] == .null)
        let contacts = dir + "/contacts.json"
        try #"{"Mom": "mother"}"#.write(toFile: contacts, atomically: true, encoding: .utf8)
        let stated = try SanadCLI.run(
            ["credit", "analyze", "--consent", "-", "--json", "--contacts", contacts], stdin: Self.messages,
            environment: env)
        let record = try #require(try JSONValue.parse(stated.stdout)["record"])
        #expect(record["settings"]?["contactsSHA256"]?.stringValue?.count == 64, "\(stated.stderr)")
        #expect(record["lovedOnes"]?.arrayValue?.first?["signal"]?.stringValue == "stated", "\(record)")
        try #"{"Mom": 3}"#.write(toFile: contacts, atomically: true, encoding: .utf8)
        let badContacts = try SanadCLI.run(
            ["credit", "analyze", "--consent", "-", "--contacts", contacts], stdin: Self.messages, environment: env)
        #expect(
            badContacts.status == 64 && badContacts.stderr.contains("contacts.json: \"Mom\" must map"),
            "\(badContacts.stderr)")
        #expect(try SanadCLI.run(["credit", "verify", dir + "/r.json"], environment: env).status == 0)
        let text = try String(contentsOfFile: dir + "/r.json", encoding: .utf8)
        let tampered = text.replacingOccurrences(of: "\"promisesKept\":1", with: "\"promisesKept\":2")
        #expect(tampered != text)
        let bad = try SanadCLI.run(["credit", "verify", "-"], stdin: tampered, environment: env)
        #expect(bad.status == 1 && bad.stderr.contains("bad-signature"))
        let malformed = try SanadCLI.run(["credit", "analyze", "--consent", "-"], stdin: "hello\n", environment: env)
        #expect(malformed.status == 1 && malformed.stderr.contains("line 1"))
    }

    @Test(
        "a database that accepts the connection and never answers is an error after --timeout; the record waits"
    )
    func silentDatabase() throws {
        // A listening socket nobody accepts from: the kernel completes the handshake, PostgreSQL never answers.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let dir = Self.temporary()
        let env = ["SANAD_DATA": dir]
        #expect(
            try SanadCLI.run(["credit", "analyze", "--consent", "-"], stdin: Self.messages, environment: env).status
                == 0)
        let db = "host=127.0.0.1 port=\(port) dbname=credit user=sanad_device"
        let sent = try SanadCLI.run(["credit", "send", "--db", db, "--timeout", "2"], environment: env)
        #expect(sent.status == 1 && sent.stdout.contains("not confirmed"), "\(sent.stdout)\(sent.stderr)")
        #expect(sent.stdout.lowercased().contains("timeout"), "\(sent.stdout)")
        #expect(sent.stdout.contains("1 record(s) wait in the outbox"), "\(sent.stdout)")
        let status = try SanadCLI.run(["credit", "status", "--db", db, "--timeout", "2", "--json"], environment: env)
        #expect(try JSONValue.parse(status.stdout)["database"]?["reachable"]?.boolValue == false, "\(status.stdout)")
    }

    @Test("privacy --erase leaves no file of the plugin: records, keys, jobs, log")
    func eraseLeavesNothing() throws {
        let dir = Self.temporary()
        let env = ["SANAD_DATA": dir]
        #expect(
            try SanadCLI.run(["credit", "analyze", "--consent", "-"], stdin: Self.messages, environment: env).status
                == 0)
        let store = URL(fileURLWithPath: dir).appendingPathComponent("credit-scoring")
        #expect(FileManager.default.fileExists(atPath: store.appendingPathComponent("keys").path))
        let erased = try SanadCLI.run(["credit", "privacy", "--erase"], environment: env)
        #expect(erased.status == 0, "\(erased.stderr)")
        let left = FileManager.default.enumerator(atPath: store.path)?.allObjects ?? []
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test("history verifies every record: a forged file is listed invalid with no score, and send refuses it offline")
    func forgedRecords() throws {
        let dir = Self.temporary()
        let env = ["SANAD_DATA": dir]
        let r = try SanadCLI.run(
            ["credit", "analyze", "--consent", "-", "--json"], stdin: Self.messages, environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let history = try JSONValue.parse(try SanadCLI.run(["credit", "history", "--json"], environment: env).stdout)
        let good = try #require(history.arrayValue?.first)
        #expect(good["state"]?.stringValue == "local" && good["trustworthiness"] != nil, "\(history)")
        let id = try #require(good["recordId"]?.stringValue)
        // A copy with a higher score under a later id: canonical bytes, a signature that no longer matches.
        let records = URL(fileURLWithPath: dir).appendingPathComponent("credit-scoring/records")
        let text = try String(contentsOf: records.appendingPathComponent("\(id).json"), encoding: .utf8)
        let forgedID = "29991231T000000Z-000000000000"
        let score = try #require(good["trustworthiness"]?.intValue)
        let forged = text.replacingOccurrences(of: id, with: forgedID)
            .replacingOccurrences(
                of: "\"trustworthiness\":\(score)", with: "\"trustworthiness\":\(score == 100 ? 99 : 100)")
        try forged.write(to: records.appendingPathComponent("\(forgedID).json"), atomically: true, encoding: .utf8)
        let listed = try SanadCLI.run(["credit", "history"], environment: env)
        let line = try #require(listed.stdout.split(separator: "\n").first { $0.hasPrefix(forgedID) })
        #expect(line.contains("invalid: bad-signature") && line.contains("not shown"), "\(listed.stdout)")
        // Sending it names the reason and never reaches for the database.
        let sent = try SanadCLI.run(
            ["credit", "send", forgedID, "--db", "host=/nonexistent port=1 connect_timeout=1"], environment: env)
        #expect(sent.status == 1 && sent.stderr.contains("invalid: bad-signature"), "\(sent.stderr)")
        #expect(!(sent.stdout + sent.stderr).contains("unreachable"))
        // A confirmation that names another digest does not make a record stored.
        let confirmations = URL(fileURLWithPath: dir).appendingPathComponent("credit-scoring/confirmations")
        try FileManager.default.createDirectory(at: confirmations, withIntermediateDirectories: true)
        try #"{"digest":"00","id":7,"recordId":"\#(id)"}"#.write(
            to: confirmations.appendingPathComponent("\(id).json"), atomically: true, encoding: .utf8)
        let after = try SanadCLI.run(["credit", "history"], environment: env)
        #expect(after.stdout.contains("invalid: confirmation-mismatch") && !after.stdout.contains("stored as id 7"))
        let status = try JSONValue.parse(try SanadCLI.run(["credit", "status", "--json"], environment: env).stdout)
        #expect(status["invalid"]?.arrayValue?.count == 2, "\(status)")
    }

    @Test(
        "a background job reports progress, stops on cancel without a record, and resumes from its checkpoint to the record an uninterrupted run writes"
    )
    func backgroundJob() throws {
        let dir = Self.temporary()
        let env = ["SANAD_DATA": dir]
        // A million messages: long enough that the cancel below arrives while the job runs, on any machine.
        var data = Data()
        let lines = [
            "2024-03-01T10:15 | Mom | did you pay the rent?\n", "2024-03-01T10:16 | me | paid, thanks\n",
            "2024-03-02T09:00 | Ali | can you lend me 200?\n", "2024-03-02T09:05 | me | I will pay you back Friday\n",
        ].map { Data($0.utf8) }
        for i in 0..<1_000_000 { data.append(lines[i % 4]) }
        let input = dir + "/big.txt"
        try data.write(to: URL(fileURLWithPath: input))
        func credit(_ args: [String]) throws -> SanadCLI.Result {
            try SanadCLI.run(["credit"] + args, environment: env)
        }
        func jobs() throws -> [JSONValue] {
            try JSONValue.parse(try credit(["jobs", "--json"]).stdout).arrayValue ?? []
        }

        let started = try credit(["analyze", input, "--background", "--consent"])
        #expect(started.status == 0 && started.stdout.hasPrefix("job job-"), "\(started.stdout)\(started.stderr)")
        let id = try #require(try jobs().first?["id"]?.stringValue)
        let cancelled = try credit(["cancel", id])
        #expect(
            cancelled.status == 0 && cancelled.stdout.contains("cancelled; no record was written"),
            "\(cancelled.stdout)")
        #expect(try credit(["history"]).stdout.hasPrefix("no records"))
        let stopped = try #require(try jobs().first)
        #expect(stopped["state"]?.stringValue == "cancelled" && stopped["estimatedTotal"]?.intValue == 1_000_000)

        // The checkpoint holds counters and ids, no message text; a damaged one is refused, named.
        let checkpointFile = dir + "/credit-scoring/jobs/\(id).checkpoint"
        let checkpoint = try Data(contentsOf: URL(fileURLWithPath: checkpointFile))
        let fold = try #require(
            (try JSONValue.parse(checkpoint))["checkpoint"]?["fold"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        let stored = String(decoding: fold, as: UTF8.self)
        #expect(
            stored.contains("\"example\"") && !stored.contains("lend me") && !stored.contains("pay you back"),
            "\(stored)")
        try Data("{".utf8).write(to: URL(fileURLWithPath: checkpointFile))
        let refused = try credit(["resume", id])
        #expect(refused.status == 1 && refused.stderr.contains(checkpointFile + " is damaged"), "\(refused.stderr)")
        try checkpoint.write(to: URL(fileURLWithPath: checkpointFile))
        let resumed = try credit(["resume", id])
        #expect(resumed.status == 0 && resumed.stdout.contains("from its checkpoint at message"), "\(resumed.stdout)")
        var finished: JSONValue?
        for _ in 0..<1200 {  // a generous bound for a loaded machine, not a speed check
            if let j = try jobs().first, j["state"]?.stringValue != "running" {
                finished = j
                break
            }
            usleep(250_000)
        }
        let done = try #require(finished)
        #expect(done["state"]?.stringValue == "done" && done["done"]?.intValue == 1_000_000, "\(done)")
        let record = try #require(done["recordId"]?.stringValue)
        #expect(try credit(["history"]).stdout.contains(record))
        let file = dir + "/credit-scoring/records/\(record).json"
        #expect(try credit(["verify", file]).status == 0)
        // Resumed from the checkpoint, the record is the one an uninterrupted run writes.
        let whole = try JSONValue.parse(
            try SanadCLI.run(
                ["credit", "analyze", input, "--json", "--consent"], environment: ["SANAD_DATA": Self.temporary()]
            )
            .stdout)
        let resumedRecord = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: file)))
        for key in ["trustworthiness", "traits", "counts", "input", "explanations", "prioritisedMessageIds"] {
            #expect(resumedRecord[key] == whole["record"]?[key], "\(key)")
        }
        #expect(try credit(["resume", id]).status == 64)
        #expect(try credit(["analyze", "--consent", "-", "--background"]).status == 64)
        #expect(try credit(["cancel", "job-none"]).status != 0)
    }
}
