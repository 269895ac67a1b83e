import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// What `sanad credit analyze` asks before it starts: consent before the first analysis (asked on a terminal,
/// `--consent` when piped, recorded in the record) and, for a large file on a terminal, all / loved ones only /
/// background. Terminals are pseudo-terminals made by script(1).
@Suite("sanad credit: consent and the large-input choice", .enabled(if: SanadCLI.executable != nil))
struct CreditConsentCLITests {
    /// `sanad arguments…` on a pseudo-terminal with `answers` typed: its exit status and everything it showed.
    static func onTerminal(_ arguments: [String], answers: String, environment: [String: String]) throws
        -> (status: Int32, shown: String)?
    {
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path), let sanad = SanadCLI.executable else {
            return nil
        }
        let command = ([sanad.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let r = try runChildProcess(
            script, ["-qec", command, "/dev/null"], stdin: Data(answers.utf8),
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            directory: TestPaths.packageRoot)
        return (r.status, String(decoding: r.stdout, as: UTF8.self))
    }

    static func fixture() throws -> (data: String, messages: String) {
        let data = CreditCLITests.temporary()
        let messages = data + "/m.txt"
        try CreditCLITests.messages.write(toFile: messages, atomically: true, encoding: .utf8)
        return (data, messages)
    }

    static func records(_ data: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: data + "/credit-scoring/records")) ?? []).sorted()
    }

    @Test("piped: refused without --consent (nothing written); --consent is kept, recorded, and erased with the store")
    func pipedConsent() throws {
        let (data, messages) = try Self.fixture()
        let env = ["SANAD_DATA": data]
        let refused = try SanadCLI.run(["credit", "analyze", messages], environment: env)
        #expect(refused.status == 64 && refused.stderr.contains("--consent"), "\(refused.stderr)")
        #expect(Self.records(data).isEmpty)
        let given = try SanadCLI.run(["credit", "analyze", messages, "--consent", "--json"], environment: env)
        #expect(given.status == 0, "\(given.stderr)")
        let consent = try JSONValue.parse(given.stdout)["record"]?["consent"]
        #expect(consent?["how"]?.stringValue == "flag" && consent?["givenAt"]?.stringValue?.count == 20)
        // Kept: the next analysis needs no flag and records the same consent.
        let later = try SanadCLI.run(["credit", "analyze", messages, "--json"], environment: env)
        let kept = try JSONValue.parse(later.stdout)["record"]?["consent"]
        #expect(later.status == 0 && kept == consent)
        #expect(try SanadCLI.run(["credit", "privacy", "--erase"], environment: env).status == 0)
        #expect(!FileManager.default.fileExists(atPath: data + "/credit-scoring/consent.json"))
        #expect(try SanadCLI.run(["credit", "analyze", messages], environment: env).status == 64)
    }

    @Test("on a terminal: a no writes nothing; a yes is recorded as given on the terminal")
    func terminalConsent() throws {
        let (data, messages) = try Self.fixture()
        let env = ["SANAD_DATA": data]
        guard let no = try Self.onTerminal(["credit", "analyze", messages], answers: "n\n", environment: env) else {
            return
        }
        #expect(no.status == 1 && no.shown.contains("Do you consent"), "\(no.shown)")
        #expect(no.shown.contains("no consent, so no analysis") && Self.records(data).isEmpty, "\(no.shown)")
        let yes = try #require(try Self.onTerminal(["credit", "analyze", messages], answers: "y\n", environment: env))
        #expect(yes.status == 0 && yes.shown.contains("trustworthiness:"), "\(yes.shown)")
        let record = try #require(Self.records(data).first)
        let text = try String(contentsOfFile: data + "/credit-scoring/records/" + record, encoding: .utf8)
        #expect(try JSONValue.parse(text)["consent"]?["how"]?.stringValue == "terminal")
    }

    @Test(
        "a large file on a terminal offers all / loved ones / background; piped, the flags decide and nothing is asked")
    func largeInputChoice() throws {
        let (data, messages) = try Self.fixture()
        // 100 bytes counts as large here; the default is 16 MiB.
        let env = ["SANAD_DATA": data, "SANAD_CREDIT_LARGE_BYTES": "100"]
        let piped = try SanadCLI.run(["credit", "analyze", messages, "--consent", "--json"], environment: env)
        #expect(piped.status == 0 && !piped.stderr.contains("This input is large"), "\(piped.stderr)")
        #expect(try JSONValue.parse(piped.stdout)["record"]?["settings"]?["scope"]?.stringValue == "all")
        // An answer that names nothing is asked again; "l" analyses the loved ones' conversations only.
        guard
            let loved = try Self.onTerminal(
                ["credit", "analyze", messages, "--json"], answers: "maybe\nl\n", environment: env)
        else { return }
        #expect(loved.status == 0, "\(loved.shown)")
        #expect(loved.shown.components(separatedBy: "This input is large").count == 3, "\(loved.shown)")
        #expect(
            loved.shown.contains("about 4 messages") && loved.shown.contains("\"scope\" : \"loved-ones\""),
            "\(loved.shown)")
        // "b" starts a background job instead.
        let job = try #require(
            try Self.onTerminal(["credit", "analyze", messages], answers: "b\n", environment: env))
        #expect(job.status == 0 && job.shown.contains("started (process"), "\(job.shown)")
        // --scope given: nothing is asked even on a terminal.
        let flagged = try #require(
            try Self.onTerminal(["credit", "analyze", messages, "--scope", "all"], answers: "", environment: env))
        #expect(flagged.status == 0 && !flagged.shown.contains("This input is large"), "\(flagged.shown)")
    }
}
