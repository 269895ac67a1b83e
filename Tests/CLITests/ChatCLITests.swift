import Foundation
import SanadTestSupport
import Testing

/// `sanad chat` from a pipe with SmolLM2 on the pure-Swift engine, the sample user at 2026-11-22 (issue 25).
@Suite(
    "sanad chat: typed questions and the specification's states",
    .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct ChatCLITests {
    func chat(_ input: String, _ extra: [String] = []) throws -> SanadCLI.Result {
        let data = try TestPaths.temporaryDirectory()
        return try SanadCLI.run(
            ["chat", "--tier", "4gb", "--now", "2026-11-22", "--backend", "pure-swift", "-n", "24", "-t", "1"] + extra,
            stdin: input, environment: ["SANAD_DATA": data.path])
    }

    @Test("a typed question gets the grounded answer with its link; an uncovered one the list of what Sanad can do")
    func typed() throws {
        let r = try chat("جوازي متى يخلص؟\nوش أخبارك؟\n/quit\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("سند (مسودة النموذج):"), "\(r.stdout)")
        #expect(r.stdout.contains("جواز السفر ينتهي في 2027-02-05، باقي 75 يوماً."), "\(r.stdout)")
        #expect(r.stdout.contains("absher://service/passport_renewal?alert=pp-5521"), "\(r.stdout)")
        #expect(r.stdout.contains("أقدر أساعدك في:"), "\(r.stdout)")
        #expect(r.stdout.contains("(جارٍ تحميل النموذج…)") && r.stdout.contains("(النموذج جاهز)"), "\(r.stdout)")
    }

    @Test(
        "no draft reaches the transcript or the history without --show-drafts: SmolLM2's drafts fail, and only the templates show"
    )
    func draftsHidden() throws {
        let input = "1\nجوازي متى يخلص؟\nHow much does it cost to renew my passport?\n/save HISTORY\n/quit\n"
        /// The transcript, and every text of the saved history (contents, notes, drafts) with its drafts.
        func run(_ extra: [String]) throws -> (stdout: String, history: [String], drafts: [String]) {
            let file = try TestPaths.temporaryDirectory().appendingPathComponent("history.json")
            let r = try chat(input.replacingOccurrences(of: "HISTORY", with: file.path), extra)
            #expect(r.status == 0, "\(r.stderr)")
            let entries = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [[String: Any]])
            let checks = entries.compactMap { $0["check"] as? [String: Any] }
            let drafts = checks.compactMap { $0["draft"] as? String }
            let texts = entries.compactMap { $0["content"] as? String } + checks.compactMap { $0["note"] as? String }
            return (r.stdout, texts + drafts, drafts)
        }
        let label = "سند (مسودة النموذج): "
        // The tiers word these replies with templates (measured: SmolLM2's drafts fail); the model words them here.
        let debug = try run(["--show-drafts", "--phrasing", "model"])
        let drafts = debug.stdout.split(separator: "\n").filter { $0.hasPrefix(label) }.map {
            String($0.dropFirst(label.count)).trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        // The chip's and the two questions' greedy drafts, shown only when asked for, and kept as the checks' drafts.
        #expect(drafts.count == 3, "\(debug.stdout)")
        #expect(debug.drafts.map { $0.trimmingCharacters(in: .whitespaces) } == drafts, "\(debug.history)")
        let person = try run(["--phrasing", "model"])
        #expect(!person.stdout.contains(label), "\(person.stdout)")
        #expect(person.drafts.isEmpty)
        for draft in drafts {
            #expect(!person.stdout.contains(draft), "draft '\(draft)' shown: \(person.stdout)")
            #expect(!person.history.contains { $0.contains(draft) }, "draft '\(draft)' saved: \(person.history)")
        }
        #expect(person.stdout.contains("سند (يكتب): رخصة قيادتك على وشك الانتهاء: باقي 45 يوماً"), "\(person.stdout)")
    }

    @Test("--lang en: an English greeting, chips and pages; every reply follows its message's language")
    func languages() throws {
        let english = try chat("1\nجوازي متى يخلص؟\n/open 2\n/quit\n", ["--lang", "en"])
        #expect(english.status == 0, "\(english.stderr)")
        #expect(english.stdout.hasPrefix("Sanad: Hello, I am Sanad, your Absher assistant."), "\(english.stdout)")
        #expect(english.stdout.contains("  1) You have a proactive alert: Your driving licence is about to expire"))
        #expect(english.stdout.contains("45 days left until your driving licence expires (on 2027-01-06)."))
        #expect(english.stdout.contains("Sanad: Your son Hussam: driving licence issue, due in 30 days"))
        #expect(english.stdout.contains("══ Dependents ══"), "\(english.stdout)")
        // An Arabic question in an English chat is answered in Arabic.
        #expect(english.stdout.contains("جواز السفر ينتهي في 2027-02-05، باقي 75 يوماً."), "\(english.stdout)")

        let arabic = try chat("How much does it cost to renew my passport?\n/quit\n")
        #expect(arabic.stdout.hasPrefix("سند: مرحباً، أنا سند"), "\(arabic.stdout)")
        #expect(
            arabic.stdout.contains("Passport renewal: Fees: 300 SAR for 5 years, and 600 SAR for 10 years."),
            "\(arabic.stdout)")
        let bad = try chat("/quit\n", ["--lang", "fr"])
        #expect(bad.status == 64 && bad.stderr.contains("--lang takes ar|en"), "\(bad.stderr)")
    }

    @Test("memory pressure unloads the model with a warning; the next message loads it again")
    func memoryPressure() throws {
        // More free memory than any machine has: every reply is followed by an unload.
        // The model words the grounded replies here (the tiers use templates, which load no model).
        let r = try chat(
            "جوازي متى يخلص؟\nكم رسوم تجديد رخصة القيادة؟\n/quit\n",
            ["--min-free", "1073741823", "--phrasing", "model"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.components(separatedBy: "ذاكرة الجهاز منخفضة").count - 1 == 2, "\(r.stdout)")
        #expect(r.stdout.components(separatedBy: "(جارٍ تحميل النموذج…)").count - 1 == 2, "\(r.stdout)")
        #expect(r.stdout.contains("400 ريال"), "\(r.stdout)")
    }

    @Test("a reply that outlasts --timeout is stopped and says so; the grounded template still answers")
    func timeout() throws {
        let r = try chat("جوازي متى يخلص؟\n/quit\n", ["--timeout", "0.001", "--phrasing", "model"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("تأخر الرد أكثر من ثانية واحدة"), "\(r.stdout)")
        #expect(r.stdout.contains("باقي 75 يوماً"), "\(r.stdout)")
        let bad = try chat("/quit\n", ["--timeout", "-1"])
        #expect(bad.status != 0 && bad.stderr.contains("--timeout"), "\(bad.stderr)")
    }

    @Test("a huge typed message does not break the chat: the prompt is cut to fit, later turns still answer")
    func hugeMessage() throws {
        let huge = String(repeating: "كم رسوم تجديد جواز السفر ", count: 4000)
        let r = try chat(huge + "\nجوازي متى يخلص؟\n/quit\n", ["-c", "512"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("تعذّر إكمال الرد"), "\(r.stdout.suffix(2000))")
        #expect(r.stdout.contains("600 ريال") && r.stdout.contains("باقي 75 يوماً"), "\(r.stdout.suffix(2000))")
    }

    @Test("/tools on: the model calls one of the offered tools (any model: the call is constrained), Sanad runs it")
    func tools() throws {
        let r = try chat("/tools on\nWhat are my alerts?\n/tools off\n/quit\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("(الأدوات مفعّلة") && r.stdout.contains("(الأدوات معطّلة)"), "\(r.stdout)")
        let list = try SanadCLI.run(["tools", "list", "--tier", "4gb"])
        let offered = Set(
            list.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(offered.contains("list_alerts"), "\(list.stdout)")
        if let line = r.stdout.split(separator: "\n").first(where: { $0.hasPrefix("سند: 🔧 ") }) {
            let name = String(line.dropFirst("سند: 🔧 ".count).prefix { $0 != " " })
            #expect(offered.contains(name), "\(line)")
        } else {
            // The model picked a tool whose arguments were valid but whose run failed (a file that is not there).
            #expect(r.stdout.contains("تعذّر تجهيز الرد"), "\(r.stdout)")
        }
    }

    @Test("--user FILE: the person's own data answers; an invalid file is refused with the field named")
    func userFile() throws {
        let dir = try TestPaths.temporaryDirectory()
        let user = dir.appendingPathComponent("me.json")
        try #"""
        {"documents": [{"id": "pp-1", "type": "passport", "expiryDate": "2026-12-02"}],
         "workers": [{"id": "w-9", "name": "Ana", "relationship": "عاملتك المنزلية", "gender": "female",
                      "documents": [{"id": "iq-9", "type": "iqama", "expiryDate": "2026-12-04"}],
                      "en": {"name": "Ana", "relationship": "your housemaid"}}],
         "violations": [{"id": "t1", "amountSAR": 150, "dueDate": "2026-12-01"}]}
        """#.write(to: user, atomically: true, encoding: .utf8)
        let r = try chat(
            "When does my passport expire?\nWhen does my housemaid's iqama expire?\nHow much do I owe in traffic fines?\n/quit\n",
            ["--user", user.path, "--phrasing", "template"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Your passport expires on 2026-12-02, 10 days left."), "\(r.stdout)")
        #expect(r.stdout.contains("Your housemaid Ana's iqama expires on 2026-12-04, 12 days left."), "\(r.stdout)")
        #expect(r.stdout.contains("Your 1 unpaid violation totals 150 SAR"), "\(r.stdout)")
        try #"{"documents": [], "violations": [{"id": "t1", "amountSAR": "150", "dueDate": "2026-12-01"}]}"#.write(
            to: user, atomically: true, encoding: .utf8)
        let bad = try chat("/quit\n", ["--user", user.path])
        #expect(bad.status != 0 && bad.stderr.contains("\(user.path): violations[0].amountSAR"), "\(bad.stderr)")
        let missing = try chat("/quit\n", ["--user", dir.appendingPathComponent("none.json").path])
        #expect(missing.status == 64 && missing.stderr.contains("--user"), "\(missing.stderr)")
    }
}
