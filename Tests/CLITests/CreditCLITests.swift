import Foundation
import SanadCore
import SanadTestSupport
import Testing

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
            ["credit", "analyze", "-", "--json", "--out", dir + "/r.json"], stdin: Self.messages, environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let out = try JSONValue.parse(r.stdout)
        #expect(out["record"]?["counts"]?["promisesKept"]?.intValue == 1)
        #expect(try SanadCLI.run(["credit", "verify", dir + "/r.json"], environment: env).status == 0)
        let text = try String(contentsOfFile: dir + "/r.json", encoding: .utf8)
        let tampered = text.replacingOccurrences(of: "\"promisesKept\":1", with: "\"promisesKept\":2")
        #expect(tampered != text)
        let bad = try SanadCLI.run(["credit", "verify", "-"], stdin: tampered, environment: env)
        #expect(bad.status == 1 && bad.stderr.contains("bad-signature"))
        let malformed = try SanadCLI.run(["credit", "analyze", "-"], stdin: "hello\n", environment: env)
        #expect(malformed.status == 1 && malformed.stderr.contains("line 1"))
    }
}
