import FormsPlugin
import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// A provider with fixed proposals or an error: only for the fallback logic (it says nothing of a model's quality).
struct ScriptedProvider: FormAnswerProvider {
    var reply: [FormProposal]
    var failure: String?

    func proposals(for text: String, turn: FormTurn) async throws -> [FormProposal] {
        if let failure { throw SanadError.engine(failure) }
        return reply
    }
}

@Suite("Model answer provider: schema, proposals and fallback to rules")
struct ModelAnswerProviderTests {
    /// A DMV session at the identity step (fullName, dob, licenseNumber, nameChanged pending).
    static func identitySession() throws -> FormSession {
        var s = try FormsFixture.session("dmv-renewal")
        try FormsFixture.answer(&s, ["yes", "CA"])
        return s
    }

    @Test("retrieved passages go into the prompt, numbered; the evidence cites the passages that state a value")
    func retrievedContext() throws {
        let turn = try Self.identitySession().turn
        let passages = [
            RetrievedPassage(citation: "licence.txt#0 bytes 0-64", text: "DL NO T6423579 EXP 2027-01-06", score: 0.8),
            RetrievedPassage(citation: "bill.txt#1 bytes 90-180", text: "Sara Al-Harbi, 12 Elm St, Fresno", score: 0.5),
        ]
        let messages = ModelAnswerProvider.messages(
            for: "my licence number is on the card", turn: turn, passages: passages)
        let user = messages.last?.content ?? ""
        #expect(user.contains("From the person's documents:\n[1] DL NO T6423579 EXP 2027-01-06\n[2] Sara Al-Harbi"))
        let plain = ModelAnswerProvider.messages(for: "x", turn: turn).last?.content ?? ""
        #expect(!plain.contains("From the person's documents"))
        let proposals = [
            FormProposal(fieldID: "licenseNumber", value: "t6423579", detail: "model m"),
            FormProposal(fieldID: "fullName", value: "Sara Al-Harbi", detail: "model m"),
            FormProposal(fieldID: "dob", value: "1991-03-03", detail: "model m"),
        ]
        let cited = ModelAnswerProvider.cite(proposals, passages)
        #expect(
            cited.map(\.detail) == [
                "model m; cites licence.txt#0 bytes 0-64", "model m; cites bill.txt#1 bytes 90-180", "model m",
            ])
    }

    @Test("the reply schema names only the step's pending fields")
    func schemaLimitsFields() throws {
        let turn = try Self.identitySession().turn
        let schema = ModelAnswerProvider.schema(for: turn)
        let ids = schema["properties"]?["updates"]?["items"]?["properties"]?["fieldId"]?["enum"]
        #expect(ids == .array(turn.pending.map { .string($0.field.id) }))
        #expect(turn.pending.map(\.field.id) == ["fullName", "dob", "licenseNumber", "nameChanged"])
        #expect(schema["required"] == .array(["updates", "nextStepId", "notes"].map(JSONValue.string)))
    }

    @Test("a reply's updates become proposals for pending fields only, the first per field, with the model named")
    func repliesMapToPendingProposals() throws {
        let turn = try Self.identitySession().turn
        let updates = [
            ("fullName", "Sara Al-Harbi"), ("fullName", "Other"), ("email", "x@example.com"), ("dob", "3 March 1991"),
        ].map { JSONValue.object(["fieldId": .string($0.0), "value": .string($0.1)]) }
        let reply = JSONValue.object(["updates": .array(updates), "nextStepId": .null, "notes": .array([])])
        let proposals = ModelAnswerProvider.proposals(from: reply, turn: turn, evidence: "model m.gguf on pure-swift")
        #expect(proposals.map(\.fieldID) == ["fullName", "dob"])
        #expect(proposals.allSatisfy { $0.source != .modelConfirmed && $0.detail.hasPrefix("model m.gguf") })
    }

    @Test("the prompt lists the pending fields, their choices, the known answers and the text")
    func messagesCarryTheTurn() throws {
        let messages = ModelAnswerProvider.messages(for: "I'm Sara", turn: try Self.identitySession().turn)
        #expect(messages.count == 2 && messages[0].role == .system)
        let user = messages[1].content
        #expect(user.contains("- fullName (name)") && user.contains("nameChanged (yesNo)"))
        #expect(user.contains("state=CA") && user.hasSuffix("Person's text: I'm Sara"))
    }

    @Test("valid model proposals are saved after the field checks; no notice")
    func validProposalsSaved() async throws {
        var s = try Self.identitySession()
        let model = ScriptedProvider(reply: [
            FormProposal(fieldID: "fullName", value: "Sara Al-Harbi", detail: "model"),
            FormProposal(fieldID: "dob", value: "3 March 1991", detail: "model"),
        ])
        let result = try await s.respond("I'm Sara Al-Harbi, born 3 March 1991", model: model)
        #expect(result.notice == nil)
        #expect(s.storedAnswers["fullName"] == "Sara Al-Harbi" && s.storedAnswers["dob"] == "1991-03-03")
    }

    @Test("when every model value is refused, the rules provider answers and the person is told")
    func invalidProposalsFallBack() async throws {
        var s = try Self.identitySession()
        let model = ScriptedProvider(reply: [
            FormProposal(fieldID: "dob", value: "not a date"), FormProposal(fieldID: "licenseNumber", value: "12"),
            FormProposal(fieldID: "email", value: "x@example.com"),
        ])
        let result = try await s.respond("Emily Stone", model: model)
        #expect(result.notice == "the model's answer did not validate; used the rules provider")
        #expect(result.refused.map(\.field) == ["dob", "licenseNumber", "email"])
        #expect(s.storedAnswers["fullName"] == "Emily Stone" && s.storedAnswers["dob"] == nil)
    }

    @Test("when the engine fails, the rules provider answers with a notice naming the error")
    func engineFailureFallsBack() async throws {
        var s = try Self.identitySession()
        let result = try await s.respond("Emily Stone", model: ScriptedProvider(reply: [], failure: "no engine"))
        #expect(result.notice?.hasSuffix("; used the rules provider") == true)
        #expect(result.notice?.contains("no engine") == true)
        #expect(s.storedAnswers["fullName"] == "Emily Stone")
    }

    @Test("a proposal the person declines is not saved")
    func declinedNotSaved() async throws {
        var s = try Self.identitySession()
        let model = ScriptedProvider(reply: [FormProposal(fieldID: "fullName", value: "Sara Al-Harbi")])
        let result = try await s.respond("Sara", model: model) { _ in nil }
        #expect(result.outcomes.isEmpty && result.notice == nil && s.storedAnswers["fullName"] == nil)
    }

    @Test("rules first: a valid answer to the current question is saved without the model; a refused one goes to it")
    func rulesFirst() async throws {
        var s = try Self.identitySession()
        let failing = ScriptedProvider(reply: [], failure: "must not be asked")
        let direct = try await s.respondRulesFirst("Emily Stone", model: failing)
        #expect(direct.notice == nil && s.storedAnswers["fullName"] == "Emily Stone")
        let model = ScriptedProvider(reply: [
            FormProposal(fieldID: "dob", value: "1991-03-03"),
            FormProposal(fieldID: "licenseNumber", value: "D4471209"),
        ])
        let free = try await s.respondRulesFirst("licence D4471209, born in the spring", model: model)
        #expect(free.notice == nil && s.storedAnswers["dob"] == "1991-03-03")
        #expect(s.storedAnswers["licenseNumber"] == "D4471209")
    }

    @Test("a model that could not be opened: the rules provider answers and the notice gives the reason")
    func unavailableModel() async throws {
        var s = try Self.identitySession()
        let result = try await s.respond(
            "Emily Stone", model: UnavailableAnswerProvider(reason: "no engine loads x.gguf"))
        #expect(result.notice?.contains("no engine loads x.gguf") == true)
        #expect(s.storedAnswers["fullName"] == "Emily Stone")
    }
}
