import AbsherData
import DependentsPlugin
import FormsPlugin
import Foundation
import ProactiveAlertsPlugin
import SanadChat
import SanadCore
import SanadTestSupport
import ServicesPlugin
import Testing

/// The Absher plugins of the tier configs over the sample user at 2026-11-22, as `sanad chat` builds them.
func samplePlugins(now: Date = sampleNow) throws -> [any FeaturePlugin] {
    let user = try #require(AbsherSettings.sampleUserDataURL)
    let services = try #require(AbsherSettings.servicesURL)
    let data = try UserData.load(from: user, plugin: "test")
    let window = AbsherWindow(now: { now })
    return [
        ProactiveAlertsPlugin(userData: data, window: window),
        DependentsPlugin(list: try DependentList(data.dependents, file: user.path, plugin: "test"), window: window),
        ServicesPlugin(
            catalog: try ServiceCatalog.load(from: services, plugin: "test"), userData: data, window: window),
    ]
}

/// One question of `Tests/Fixtures/absher/typed-questions.json`.
struct TypedCase: Sendable {
    var text: String
    var style: String
    var link: String?
    var contains: [String]
    var uncovered: Bool

    static func all() throws -> [TypedCase] {
        let json = try JSONValue.parse(Data(contentsOf: TestPaths.fixture("absher/typed-questions.json")))
        return try #require(json["questions"]?.arrayValue).map { q in
            TypedCase(
                text: q["text"]?.stringValue ?? "", style: q["style"]?.stringValue ?? "",
                link: q["link"]?.stringValue, contains: q["contains"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                uncovered: q["uncovered"]?.boolValue ?? false)
        }
    }
}

/// Every number the sample user's data and the services file hold, the days from 2026-11-22 to each date in the
/// user's data, and the unpaid violations' count and total: the only numbers a typed answer may state.
func numbersInSampleData() throws -> Set<String> {
    let data = try UserData.load(from: try #require(AbsherSettings.sampleUserDataURL), plugin: "test")
    let catalog = try ServiceCatalog.load(from: try #require(AbsherSettings.servicesURL), plugin: "test")
    return try RoutingEvaluation.allowedNumbers(data: data, catalog: catalog, today: CivilDate(iso: "2026-11-22")!)
}

@Suite("Typed questions")
struct TypedQuestionTests {
    @Test("matching: diacritics, hamza and alef forms, ta marbuta, prefixes (و، ال، بال، لل), * for a prefix")
    func matching() {
        let q = TypedQuestion("وَبالجَوازات؟ ومتى تنتهي هويّتي؛ أبغى رخصتي!")
        #expect(q.mentions("جواز*") && q.mentions("جوازات") && q.mentions("هويت*") && q.mentions("رخص*"))
        #expect(q.mentions("متى") && q.mentions("ابغى") && !q.mentions("جواز") && !q.mentions("مت"))
        #expect(TypedQuestion("بطاقة الأحوال").mentions("بطاقه الاحوال"))
        #expect(!TypedQuestion("الأحوال بطاقة").mentions("بطاقه الاحوال"))
        #expect(TypedQuestion("٥ سنين").words == ["5", "سنين"])
        #expect(TypedQuestion("When does my Passport expire?").mentions(["passport*"]))
        #expect(TypedQuestion("ولدي").mentions("ولد*") && TypedQuestion("ومتى").mentions("متى"))
        #expect(!TypedQuestion("وش").mentions("ش") && !TypedQuestion("الم").mentions("م"))
        #expect(TypedQuestion("").words.isEmpty && !TypedQuestion("").mentions("*"))
        #expect(TypedQuestion("وش عندي").count(["وش عندي", "عندي", "عند"]) == 2)
    }

    @Test(
        "the 40 held-out questions: the right plugin, facts and link, or an honest 'I can help with…'; no number outside the user's data"
    )
    func heldOut() async throws {
        let cases = try TypedCase.all()
        #expect(cases.count == 40 && cases.filter { $0.style == "gulf" }.count == 20)
        let allowed = try numbersInSampleData()
        for c in cases {
            // A model whose text fails every check: the stored answer is the template, built from the data only.
            let engine = ScriptedSession(replies: [["هذا", " نص", " 2023"]])
            let session = await openChat(try samplePlugins(), engine: engine)
            try await session.send(c.text)
            let reply = try #require(await session.messages.last, "\(c.text)")
            let link = reply.deepLink.map { "\($0.serviceType):\($0.alertId)" }
            #expect(link == c.link, "\(c.text): \(reply.content)")
            for fact in c.contains {
                #expect(reply.content.contains(fact), "\(c.text) does not state '\(fact)': \(reply.content)")
            }
            let foreign = digitRuns(normalizeArabic(reply.content)).filter { !allowed.contains(String(Int($0) ?? -1)) }
            #expect(foreign.isEmpty, "\(c.text): numbers not in the data \(foreign): \(reply.content)")
            // Every reply is in the asker's language: English questions get English answers.
            let language: ChatLanguage = c.style == "en" ? .english : .arabic
            #expect(ChatLanguage.of(reply.content) == language, "\(c.text): \(reply.content)")
            if c.uncovered {
                let wording = language == .english ? AbsherSettings.englishWording : AbsherSettings.wording
                #expect(reply.content.hasPrefix(wording.uncoveredQuestion?([]) ?? "-"), "\(reply.content)")
                #expect(reply.check == nil)
                #expect(engine.prompts.isEmpty, "\(c.text): an uncovered question reached the engine")
            } else {
                #expect(reply.check?.verified == false, "\(c.text): the failing model text was kept")
                #expect(engine.prompts.count == 1)
            }
        }
    }

    @Test("a model answer that states the facts is kept with a ✓ check; one with a foreign number is replaced")
    func modelWording() async throws {
        let good = ScriptedSession(replies: [["جواز السفر ينتهي في 2027-02-05، وباقي 75 يوماً. جدده من الرابط أدناه."]])
        let session = await openChat(try samplePlugins(), engine: good)
        try await session.send("جوازي متى يخلص؟")
        let kept = try #require(await session.messages.last)
        #expect(kept.content.hasPrefix("جواز السفر ينتهي في 2027-02-05") && kept.check?.verified == true)
        #expect(kept.deepLink?.serviceType == "passport_renewal")
        #expect(good.prompts.first?.contains("2027-02-05") == true)

        let bad = ScriptedSession(replies: [["جواز السفر ينتهي في 2027-02-05، وباقي 90 يوماً."]])
        let other = await openChat(try samplePlugins(), engine: bad, showDrafts: true)
        try await other.send("جوازي متى يخلص؟")
        let replaced = try #require(await other.messages.last)
        #expect(replaced.content.hasPrefix("تجديد جواز السفر: جواز السفر ينتهي في 2027-02-05، باقي 75 يوماً."))
        // With drafts shown (a debugging view) the note says why, quoting the foreign number.
        #expect(replaced.check?.verified == false && replaced.check?.note.contains("90") == true)
    }

    @Test("the uncovered answer lists every plugin's capabilities, forms included; a general host still generates")
    func uncovered() async throws {
        let dir = try TestPaths.temporaryDirectory()
        let forms = try FormsPlugin(context: PluginContext(dataDirectory: dir, now: { sampleNow }))
        let session = await openChat(try samplePlugins() + [forms])
        try await session.send("وش أخبارك؟")
        let reply = try #require(await session.messages.last)
        #expect(reply.deepLink == nil)
        for phrase in ["تنبيهك", "التابعين", "تجديد جواز السفر", "تأشيرة الخروج والعودة", "تعبئة النماذج"] {
            #expect(reply.content.contains(phrase), "\(phrase): \(reply.content)")
        }
        var wording = AbsherSettings.wording
        wording.uncoveredQuestion = nil
        let general = await openChat(
            try samplePlugins(), engine: ScriptedSession(replies: [["أهلاً"]]), wording: wording)
        try await general.send("وش أخبارك؟")
        #expect(await general.messages.last?.content == "أهلاً")
    }

    /// A knowledge base of one service with one fee and one requirement, `english` as its `en` object, and
    /// `replacing` the JSON of some of its keys.
    func service(english: String?, _ replacing: [String: String] = [:]) -> String {
        var keys = [
            ("eligibility", #""unknown""#), ("lateFines", #""unknown""#), ("steps", #""unknown""#),
            ("where", #""unknown""#),
            ("source", #"{"url": "https://example.org", "page": "p", "asOf": "2024", "checked": "no"}"#),
        ]
        for (key, json) in replacing { keys = keys.map { $0.0 == key ? (key, json) : $0 } }
        let en = english.map { #", "en": "# + $0 } ?? ""
        return
            #"{"services": [{"id": "x", "name": "س", "description": "و", "keywords": ["س"], "actionKeywords": [], "fees": [{"label": "ل", "amountSAR": 1}], "requirements": ["م"], "link": {"serviceType": "service_info"}, "#
            + keys.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + en + "}]}"
    }

    @Test("service pages open from an answer's link; a bad services file is an error naming the key")
    func pagesAndCatalog() async throws {
        let session = await openChat(try samplePlugins())
        try await session.send("كيف أصدر رخصة قيادة جديدة؟")
        let link = try #require(await session.messages.last?.deepLink)
        let page = try await session.follow(link)
        // Every fact of the service, an unknown one as not in Sanad's data, and the page its facts come from.
        let fields = page.sections[0].fields
        #expect(page.screen == "service-info" && fields.contains { $0.value == "40 ريال عن كل سنة من مدة الرخصة" })
        #expect(fields.contains { $0.label == "المتطلبات" && $0.value == "ليس في بياناتي" })
        #expect(fields.contains { $0.label == "المصدر" && $0.value.contains("https://www.absher.sa") })
        await session.returnToChat()
        await #expect(throws: ChatError.self) {
            try await session.follow(url: "absher://service/service_info?alert=nope")
        }
        let dir = try TestPaths.temporaryDirectory()
        let valid = #"{"name": "X", "description": "D", "feeLabels": ["a"], "requirements": ["r"]}"#
        let bad: [(String, String)] = [
            (#"{"services": [{"id": "x"}]}"#, "services[0].name"),
            (#"{"services": [], "extra": 1}"#, "extra"),
            (#"{"services": []}"#, "services"),
            ("not json", "JSON"),
            // Every service has its texts in English too, item for item.
            (service(english: nil), "services[0].en"),
            (
                service(english: #"{"name": "X", "description": "D", "feeLabels": ["a"], "requirements": []}"#),
                "services[0].en.requirements"
            ),
            (
                service(
                    english: #"{"name": "X", "description": "D", "feeLabels": ["a"], "requirements": ["r"], "fee": 1}"#),
                "services[0].en.fee"
            ),
            // A fact unknown in Arabic is unknown in English too; every service names the page its facts come from.
            (
                service(
                    english:
                        #"{"name": "X", "description": "D", "feeLabels": ["a"], "requirements": ["r"], "steps": ["s"]}"#
                ), "services[0].en.steps"
            ),
            (
                service(
                    english: valid, ["source": #"{"url": "http://x", "page": "p", "asOf": "2024", "checked": "no"}"#]),
                "services[0].source.url"
            ),
            (service(english: valid, ["lateFines": #""later""#]), "services[0].lateFines"),
        ]
        for (i, (text, key)) in bad.enumerated() {
            let file = dir.appendingPathComponent("s\(i).json")
            try text.write(to: file, atomically: true, encoding: .utf8)
            #expect {
                _ = try ServiceCatalog.load(from: file, plugin: "absher-services")
            } throws: { "\($0)".contains(key) && "\($0)".contains(file.path) }
        }
    }
}
