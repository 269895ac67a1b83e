import AbsherData
import Foundation
import SanadChat
import SanadCore
import SanadTestSupport
import ServicesPlugin
import Testing

/// Issue 35: the services people use, the person's own data, and routing that keeps the question's point.
@Suite("Routing: service, facets and subject")
struct RoutingTests {
    /// The reply to `text` in a fresh chat with the sample plugins at 2026-11-22 (templates).
    func reply(_ text: String, after earlier: [String] = []) async throws -> ChatEntry {
        let session = await openChat(try samplePlugins(), phrasing: .template)
        for line in earlier + [text] { try await session.send(line) }
        return try #require(await session.messages.last)
    }

    @Test(
        "the evaluation set through the keyword router: ≥ 95 % routed, ≥ 95 % facets, every reply in its language, no number outside the data"
    )
    func evaluationSet() async throws {
        let questions = try RoutingEvaluation.load(RoutingEvaluation.defaultQuestionsURL)
        #expect(questions.count >= 150)
        let styles = Dictionary(grouping: questions, by: \.style).mapValues(\.count)
        #expect(styles["en"]! * 3 >= questions.count - 3 && styles["gulf"]! * 3 >= questions.count - 3)
        let catalog = try ServiceCatalog.load(from: try #require(AbsherSettings.servicesURL), plugin: "test")
        // Every service is asked about, and some questions no service covers.
        #expect(Set(catalog.services.map(\.id)).isSubset(of: Set(questions.compactMap(\.service))))
        #expect(questions.contains { $0.service == nil })
        let data = try UserData.load(from: try #require(AbsherSettings.sampleUserDataURL), plugin: "test")
        let outcomes = try await RoutingEvaluation.run(
            questions, plugins: try samplePlugins(), data: data, catalog: catalog, now: sampleNow,
            loadEngine: { ScriptedSession(replies: [["-"]]) })
        print(RoutingEvaluation.table(outcomes, method: "keywords"))
        let routed = outcomes.filter(\.routed).count
        let asked = outcomes.reduce(0) { $0 + $1.question.facets.count }
        let answered = outcomes.reduce(0) { $0 + $1.facetsAnswered }
        #expect(routed * 100 >= questions.count * 95, "\(RoutingEvaluation.misses(outcomes))")
        #expect(answered * 100 >= asked * 95, "\(RoutingEvaluation.misses(outcomes))")
        let misses = RoutingEvaluation.misses(outcomes)
        #expect(outcomes.allSatisfy { $0.languageRight }, "\(misses)")
        #expect(outcomes.allSatisfy { $0.foreignNumbers.isEmpty }, "\(misses)")
    }

    @Test(
        "the issue's questions: the daughter's passport fee, the late fine as a follow-up, violations and a worker's iqama"
    )
    func issueQuestions() async throws {
        let fee = try await reply("كم رسوم تجديد جواز بنتي؟")
        #expect(fee.content.contains("بنتك سارة") && fee.content.contains("300 ريال لمدة 5 سنوات"), "\(fee.content)")
        #expect(fee.deepLink?.alertId == "passport_renewal")
        // A follow-up that names no service answers the last reply's service; a fine unknown to the data says so.
        let fine = try await reply("what is the late fine?", after: ["How do I renew my iqama?"])
        #expect(fine.content.hasPrefix("Iqama renewal: Late fine: 500 SAR"), "\(fine.content)")
        let unknownFine = try await reply("what is the late fine?", after: ["When does my passport expire?"])
        #expect(
            unknownFine.content.contains("Late fine: not in my data; check the service page"), "\(unknownFine.content)")
        #expect(unknownFine.deepLink?.serviceType == "passport_renewal")
        let violations = try await reply("How much do I owe in traffic violations?")
        #expect(violations.content.contains("Your 2 unpaid violations total 450 SAR"), "\(violations.content)")
        #expect(violations.content.contains("300 SAR (speeding) due on 2026-12-10 (in 18 days)"))
        let arabic = try await reply("كم مجموع مخالفاتي؟")
        #expect(arabic.content.contains("مخالفتان، مجموعها 450 ريال"), "\(arabic.content)")
        let iqama = try await reply("When does my driver Ramesh's iqama expire?")
        #expect(
            iqama.content.contains("Your driver Ramesh's iqama expires on 2026-12-04, 12 days left."),
            "\(iqama.content)")
        let iqamaArabic = try await reply("اقامة السواق متى تخلص؟")
        #expect(
            iqamaArabic.content.contains("الإقامة لسائقك راميش تنتهي في 2026-12-04، باقي 12 يوماً."),
            "\(iqamaArabic.content)")
        let car = try await reply("استمارة سيارتي متى تنتهي؟")
        #expect(car.content.contains("2027-01-15، باقي 54 يوماً"), "\(car.content)")
    }

    @Test("several facets in one question are all answered, in the asker's language")
    func severalFacets() async throws {
        let both = try await reply("ما رسوم تجديد الإقامة وغرامة التأخير؟")
        #expect(both.content.contains("الرسوم: ليست في بياناتي") && both.content.contains("غرامة التأخير: 500 ريال"))
        let english = try await reply("What do I need to renew my licence, and how much is it?")
        #expect(english.content.contains("Fees: 40 SAR") && english.content.contains("Requirements: not in my data"))
        #expect(ChatLanguage.of(english.content) == .english)
    }

    /// The sample user with `change` applied to its JSON object.
    func userFile(_ change: (inout [String: JSONValue]) -> Void) throws -> URL {
        let sample = try #require(AbsherSettings.sampleUserDataURL)
        var root = try #require(try JSONValue.parse(Data(contentsOf: sample)).objectValue)
        change(&root)
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("user.json")
        try Data(JSONValue.object(root).jsonString.utf8).write(to: url)
        return url
    }

    @Test(
        "each kind of error in the person's file names the field",
        arguments: [
            ("an unknown key", "workers[0].salary"), ("a wrong type", "vehicles[0].plate"),
            ("a missing key", "violations[0].amountSAR"), ("a bad date", "workers[0].documents[0].expiryDate"),
            ("a repeated id", "vehicles[0].id"), ("an unknown document type", "dependents[1].documents[0].type"),
            ("an unknown vehicle", "violations[1].vehicle"), ("a negative amount", "violations[0].amountSAR"),
            ("not true or false", "violations[0].paid"),
        ])
    func userDataErrors(kind: String, field: String) throws {
        let url = try userFile { root in
            func edit(_ key: String, _ i: Int, _ change: (inout [String: JSONValue]) -> Void) {
                var list = root[key]!.arrayValue!
                var o = list[i].objectValue!
                change(&o)
                list[i] = .object(o)
                root[key] = .array(list)
            }
            switch kind {
            case "an unknown key": edit("workers", 0) { $0["salary"] = .number(1) }
            case "a wrong type": edit("vehicles", 0) { $0["plate"] = .number(1234) }
            case "a missing key": edit("violations", 0) { $0["amountSAR"] = nil }
            case "a bad date":
                edit("workers", 0) {
                    $0["documents"] = .array([
                        .object(["id": .string("iq"), "type": .string("iqama"), "expiryDate": .string("04/12/2026")])
                    ])
                }
            case "a repeated id": edit("vehicles", 0) { $0["id"] = .string("pp-5521") }
            case "an unknown document type":
                edit("dependents", 1) {
                    $0["documents"] = .array([
                        .object(["id": .string("v"), "type": .string("visa"), "expiryDate": .string("2027-01-01")])
                    ])
                }
            case "an unknown vehicle": edit("violations", 1) { $0["vehicle"] = .string("v-9") }
            case "a negative amount": edit("violations", 0) { $0["amountSAR"] = .number(-5) }
            default: edit("violations", 0) { $0["paid"] = .string("no") }
            }
        }
        #expect {
            _ = try UserData.load(from: url, plugin: "absher-services")
        } throws: { "\($0)".contains(url.path + ": " + field) }
    }
}
