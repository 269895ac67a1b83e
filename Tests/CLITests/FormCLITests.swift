import Foundation
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sanad form` end to end from a pipe: both templates to the export, usage errors, the JSON fallback without
/// SQLite, and a process killed with SIGKILL mid-session that loses no acknowledged answer.
@Suite("sanad form", .enabled(if: SanadCLI.executable != nil))
struct FormCLITests {
    static let dmv = FormScripts.dmv
    static let ds160 = FormScripts.ds160

    static func temporary() -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-form-cli-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    func form(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> SanadCLI.Result {
        try SanadCLI.run(["form"] + args + ["--now", "2026-11-24"], stdin: stdin, environment: env)
    }

    @Test("usage: --help, a missing or unknown subcommand, an unknown template or language exit 64")
    func usage() throws {
        #expect(try SanadCLI.run(["form", "--help"]).status == 0)
        #expect(try SanadCLI.run(["forms", "list"]).stdout.contains("dmv-renewal"))
        for args in [
            [], ["frobnicate"], ["start", "nope"], ["start", "dmv-renewal", "--lang", "fr"], ["list", "extra"],
            ["review"],
        ] {
            let r = try form(args, env: ["SANAD_DATA": Self.temporary()])
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("Usage: sanad form"), "\(args)")
        }
        let missing = try form(["review", "nobody", "--store", Self.temporary()])
        #expect(missing.status == 1 && missing.stderr.contains("no form session 'nobody'"))
    }

    @Test("a DMV renewal and a DS-160 complete from a pipe; export writes the answers, the form and the checklist")
    func endToEnd() throws {
        let store = Self.temporary()
        for (template, answers) in [("dmv-renewal", Self.dmv), ("ds-160", Self.ds160)] {
            let r = try form(
                ["start", template, "--id", template, "--store", store], stdin: answers.joined(separator: "\n") + "\n")
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("Form complete."), "\(r.stdout)")
            let out = Self.temporary()
            #expect(try form(["export", template, "--out", out, "--store", store]).status == 0)
            let json = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: out + "/answers.json")))
            #expect(json["complete"] == .bool(true) && json["problems"] == .array([]), "\(json)")
            let text = try String(contentsOfFile: out + "/form.txt", encoding: .utf8)
            let checklist = try String(contentsOfFile: out + "/checklist.txt", encoding: .utf8)
            if template == "dmv-renewal" {
                #expect(json["answers"]?["dob"] == .string("1985-04-23") && json["fees"]?["total"] == .number(47))
                #expect(text.contains("Full name: Maria Lopez") && text.contains("Total: 47.00"))
                #expect(checklist.contains("Name change documents"))
            } else {
                #expect(json["answers"]?["passportNumber"] == .string("L898902C3"))
                #expect(text.contains("Spouse's surname: ERIKSSON") && checklist.contains("Marriage certificate"))
            }
        }
        let sessions = try form(["sessions", "--store", store])
        #expect(sessions.stdout.contains("ds-160  ds-160  en  100% complete"), "\(sessions.stdout)")
    }

    @Test("answer, back and restore --dry-run from the command line; a refused answer exits 1")
    func oneShot() throws {
        let store = Self.temporary()
        _ = try form(["start", "ds-160", "--id", "x", "--store", store], stdin: "")
        let bad = try form(["answer", "x", "Eriksson2", "--store", store])
        #expect(bad.status == 1 && bad.stdout.contains("✗ Surname (as in passport)"), "\(bad.stdout)")
        let good = try form(["answer", "x", "Eriksson", "--json", "--store", store])
        let state = try JSONValue.parse(good.stdout)
        #expect(state["question"]?["fieldId"] == .string("givenNames"), "\(good.stdout)")
        #expect(try form(["back", "x", "--store", store]).stdout.contains("reopened surname"))
        let file = Self.temporary() + "/x.backup.json"
        _ = try form(["answer", "x", "Eriksson", "--store", store])
        #expect(try form(["backup", "x", file, "--store", store]).status == 0)
        let dry = try form(["restore", file, "--dry-run", "--store", Self.temporary(), "--key", store + "/backup.key"])
        #expect(
            dry.status == 0 && dry.stdout.contains("would restore session x")
                && dry.stdout.contains("added (not in the store)") && dry.stdout.contains("surname = ERIKSSON"),
            "\(dry.stderr)")
    }

    @Test("restoring an older backup keeps the newer answer and says so; the store is copied aside; --replace; backups")
    func restoreKeepsNewerAnswers() throws {
        let store = Self.temporary()
        func at(_ now: String, _ args: [String], stdin: String? = nil) throws -> SanadCLI.Result {
            try SanadCLI.run(["form"] + args + ["--store", store, "--now", now], stdin: stdin)
        }
        func city() throws -> JSONValue? {
            try JSONValue.parse(try at("2026-11-24T13:00:00Z", ["review", "c", "--json"]).stdout)["answers"]?[
                "addressCity"]
        }
        let started = try at(
            "2026-11-24T10:00:00Z", ["start", "dmv-renewal", "--id", "c"],
            stdin: Self.dmv.prefix(9).joined(separator: "\n") + "\n")
        #expect(started.stderr.contains("backed up 1 session(s)") && started.stderr.contains("the first answer"))
        let old = Self.temporary() + "/old.zip"
        #expect(try at("2026-11-24T10:05:00Z", ["backup", "c", old]).status == 0)
        let changed = try at("2026-11-24T11:00:00Z", ["answer", "c", "--field", "addressCity", "Fresno"])
        #expect(changed.status == 0, "\(changed.stdout)\(changed.stderr)")
        #expect(try city() == .string("Fresno"))

        let kept = try at("2026-11-24T12:00:00Z", ["restore", old])
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(
            kept.stdout.contains("not restored session c")
                && kept.stdout.contains("kept the store's version: it is newer")
                && kept.stdout.contains("--replace"), "\(kept.stdout)")
        #expect(try city() == .string("Fresno"), "the newer answer survives")

        let replaced = try at("2026-11-24T12:01:00Z", ["restore", old, "--replace"])
        #expect(replaced.stdout.contains("the store as it was (1 session(s)) is kept in"), "\(replaced.stdout)")
        #expect(replaced.stdout.contains("restored session c") && replaced.stdout.contains("replaced by the backup's"))
        #expect(try city() == .string("Sacramento"))

        let listed = try JSONValue.parse(try at("2026-11-24T12:02:00Z", ["backups", "--json"]).stdout)
        let entries = try #require(listed["backups"]?.arrayValue)
        #expect(entries.compactMap { $0["kind"]?.stringValue }.sorted() == ["auto", "before-restore"], "\(listed)")
        let aside = try #require(entries.first { $0["kind"] == .string("before-restore") }?["file"]?.stringValue)
        #expect(try at("2026-11-24T12:03:00Z", ["backups"]).stdout.contains(aside))
        #expect(try at("2026-11-24T12:04:00Z", ["restore", aside, "--replace"]).status == 0)
        #expect(try city() == .string("Fresno"), "the copy made before the restore puts the newer answer back")

        let elsewhere = Self.temporary()
        let foreign = try SanadCLI.run(["form", "restore", old, "--store", elsewhere, "--now", "2026-11-24"])
        #expect(foreign.status == 1 && foreign.stderr.contains("--key FILE"), "\(foreign.stderr)")
        let withKey = try SanadCLI.run([
            "form", "restore", old, "--store", elsewhere, "--key", store + "/backup.key", "--now", "2026-11-24",
        ])
        #expect(withKey.status == 0 && withKey.stdout.contains("restored session c: "), "\(withKey.stderr)")
        #expect(withKey.stdout.contains("added (not in the store)"))
        let off = Self.temporary()
        _ = try SanadCLI.run(
            ["form", "start", "dmv-renewal", "--id", "q", "--store", off, "--no-auto-backup", "--now", "2026-11-24"],
            stdin: "yes\n")
        #expect(!FileManager.default.fileExists(atPath: off + "/backups"))
    }

    @Test("privacy reports what is kept, exports it as an archive, and wipes only after WIPE is typed")
    func privacy() throws {
        let store = Self.temporary()
        _ = try form(["start", "dmv-renewal", "--id", "a", "--store", store], stdin: "yes\nCA\n")
        _ = try form(["start", "ds-160", "--id", "b", "--lang", "ar", "--store", store], stdin: "")
        let report = try form(["privacy", "--json", "--store", store])
        let json = try JSONValue.parse(report.stdout)
        #expect(json["sessions"]?.arrayValue?.count == 2 && json["answersBySource"]?["typed"] == .number(2), "\(json)")
        #expect(json["sent"]?.stringValue?.hasPrefix("nothing") == true)

        let archive = Self.temporary() + "/all.zip"
        #expect(try form(["privacy", "--export", archive, "--store", store]).status == 0)
        let refused = try form(["privacy", "--wipe", "--store", store], stdin: "wipe\n")
        #expect(refused.status == 1 && refused.stderr.contains("not wiped"), "\(refused.stderr)")
        #expect(try form(["sessions", "--store", store]).stdout.contains("a  dmv-renewal"))
        let wiped = try form(["privacy", "--wipe", "--store", store], stdin: "WIPE\n")
        #expect(wiped.status == 0 && wiped.stdout.contains("wiped: 2 session(s)"), "\(wiped.stdout)")
        #expect(!(try form(["sessions", "--store", store]).stdout.contains("dmv-renewal")))

        let restored = try form(["restore", archive, "--store", store])
        #expect(restored.status == 0 && restored.stdout.contains("restored session a"), "\(restored.stdout)")
        let review = try JSONValue.parse(try form(["review", "a", "--json", "--store", store]).stdout)
        #expect(review["answers"]?["state"] == .string("CA"), "\(review)")
    }

    @Test("fill: a passport zone fills the DS-160 and a licence barcode the DMV renewal, each field confirmed")
    func fillFromDocuments() throws {
        let store = Self.temporary()
        _ = try form(["start", "ds-160", "--id", "v", "--store", store], stdin: "")
        let zone = Self.temporary() + "/passport.txt"
        try (IngestCLITests.specimen.joined(separator: "\n") + "\n").write(
            toFile: zone, atomically: true, encoding: .utf8)
        let r = try form(["fill", "v", zone, "--store", store], stdin: "yes\nno\nall\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("✓ saved surname = ERIKSSON") && r.stdout.contains("– not saved"), "\(r.stdout)")
        #expect(r.stdout.contains("Expiry date: 2012-04-15 is not in the future"), "expired passport refused")
        let review = try JSONValue.parse(try form(["review", "v", "--json", "--store", store]).stdout)
        #expect(review["answers"]?["passportNumber"] == .string("L898902C3") && review["answers"]?["givenNames"] == nil)
        let evidence = review["evidence"]?.arrayValue?.first { $0["fieldId"] == .string("passportNumber") }
        #expect(evidence?["source"] == .string("document"), "\(review)")
        #expect(evidence?["detail"]?.stringValue?.hasPrefix("passport.txt: MRZ TD3, documentNumber") == true)

        _ = try form(["start", "dmv-renewal", "--id", "d", "--store", store], stdin: "yes\n")
        let barcode = Self.temporary() + "/licence.txt"
        try IngestCLITests.aamva.write(toFile: barcode, atomically: true, encoding: .utf8)
        let d = try form(["fill", "d", barcode, "--yes", "--store", store])
        #expect(d.status == 0 && d.stdout.contains("✓ saved licenseNumber = T64235789"), "\(d.stdout)")
        #expect(d.stdout.contains("not fields of this form (dmv-renewal):"))
        let dmv = try JSONValue.parse(try form(["review", "d", "--json", "--store", store]).stdout)
        #expect(dmv["answers"]?["state"] == .string("VA") && dmv["answers"]?["dob"] == .string("1986-06-06"), "\(dmv)")
        let usage = try form(["fill", "d", barcode, "--kind", "text", "--store", store])
        #expect(usage.status == 64)
    }

    @Test("without SQLite the JSON file store is used and says why")
    func fallback() throws {
        let store = Self.temporary()
        let r = try form(
            ["start", "dmv-renewal", "--id", "f", "--store", store], stdin: "yes\nCA\n",
            env: ["SANAD_SQLITE": "/nonexistent/libsqlite3.so"])
        #expect(
            r.status == 0 && r.stderr.contains("SQLite is not available") && r.stderr.contains("scripts/setup"),
            "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: store + "/forms.json"))
        let again = try form(
            ["review", "f", "--json", "--store", store], env: ["SANAD_SQLITE": "/nonexistent/libsqlite3.so"])
        #expect(try JSONValue.parse(again.stdout)["answers"]?["state"] == .string("CA"))
    }

    /// Starts `sanad form …` with all of `input` on its standard input, reads its output until `acks` answers are
    /// acknowledged, then kills it with SIGKILL. Returns the acknowledged (field, value) pairs.
    func killAfter(_ acks: Int, arguments: [String], input: String) throws -> [(String, String)] {
        guard let exe = SanadCLI.executable else { return [] }
        let process = Process()
        process.executableURL = exe
        process.arguments = ["form"] + arguments
        let out = Pipe()
        let inp = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = inp
        try process.run()
        inp.fileHandleForWriting.write(Data(input.utf8))
        var text = ""
        var saved: [(String, String)] = []
        while saved.count < acks {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            saved = text.split(separator: "\n").compactMap { line in
                guard line.hasPrefix("✓ saved "), let eq = line.range(of: " = ") else { return nil }
                return (
                    String(line[line.index(line.startIndex, offsetBy: 8)..<eq.lowerBound]),
                    String(line[eq.upperBound...])
                )
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? inp.fileHandleForWriting.close()
        return Array(saved.prefix(acks))
    }

    @Test("SIGKILL at random points of a scripted session: resume keeps every acknowledged answer")
    func crash() throws {
        var rng = SeededGenerator(seed: 0xC4A5)
        for round in 0..<12 {
            let store = Self.temporary()
            let acks = rng.int(1...(Self.ds160.count - 1))
            let input = Self.ds160.joined(separator: "\n") + "\n"
            let saved = try killAfter(
                acks, arguments: ["start", "ds-160", "--id", "k", "--store", store], input: input)
            #expect(saved.count == acks, "round \(round)")
            let review = try form(["review", "k", "--json", "--store", store])
            #expect(review.status == 0, "round \(round): \(review.stderr)")
            let answers = try JSONValue.parse(review.stdout)["answers"]
            for (field, value) in saved {
                #expect(answers?[field] == .string(value), "round \(round) (killed after \(acks)): \(field) lost")
            }
            // The session resumes where it stopped (the process may have saved more than it acknowledged) and
            // completes.
            let done = answers?.objectValue?.count ?? 0
            #expect(done >= acks, "round \(round)")
            let remaining = Self.ds160.dropFirst(done).joined(separator: "\n") + "\n"
            let rest = try form(["resume", "k", "--store", store], stdin: remaining)
            #expect(rest.status == 0 && rest.stdout.contains("Form complete."), "round \(round): \(rest.stdout)")
            #expect(!rest.stdout.contains("✗"), "round \(round): \(rest.stdout)")
        }
    }
}

/// A full disk, simulated with a file-size limit (`ulimit -f`): the answer is refused with the store's error and
/// every answer saved before is still there.
@Suite("sanad form under a file-size limit", .enabled(if: SanadCLI.executable != nil))
struct FormFullDiskTests {
    @Test("the write fails with a clear error; nothing saved before is lost", arguments: ["sqlite", "json"])
    func fileSizeLimit(store kind: String) throws {
        let exe = try #require(SanadCLI.executable)
        let store = FormCLITests.temporary()
        var env = ProcessInfo.processInfo.environment
        if kind == "json" { env["SANAD_SQLITE"] = "/nonexistent/libsqlite3.so" }
        let first = try SanadCLI.run(
            ["form", "start", "ds-160", "--id", "d", "--store", store, "--now", "2026-11-24"],
            stdin: FormScripts.ds160.prefix(3).joined(separator: "\n") + "\n", environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        let limited = try runChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", "ulimit -f 1 && exec \"$0\" \"$@\"", exe.path, "form", "answer", "d", "1974-08-12", "--store",
                store,
            ],
            environment: env)
        let err = String(decoding: limited.stderr, as: UTF8.self)
        #expect(limited.status == 1 && !limited.crashed, "\(err)")
        #expect(err.contains(store), "the error names the store file: \(err)")
        let review = try SanadCLI.run(["form", "review", "d", "--json", "--store", store], environment: env)
        let answers = try JSONValue.parse(review.stdout)["answers"]
        #expect(answers?["surname"] == .string("ERIKSSON") && answers?["sex"] == .string("female"), "\(review.stdout)")
        #expect(answers?["dateOfBirth"] == nil)
    }
}
