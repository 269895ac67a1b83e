import FormsPlugin
import SanadCore
import SanadTestSupport
import Testing

/// The conversation engine on both shipped templates: complete flows, conditional sections, rules, going back,
/// and random answer sequences.
@Suite("form flow")
struct FormFlowTests {
    static func start(_ template: String, language: String = "en") throws -> FormSession {
        try FormSession.start(
            template: try FormsFixture.catalog().template(template), store: MemoryFormStore(), language: language,
            today: FormsFixture.today)
    }

    @Test("a DMV renewal completes; fees include the add-ons; a name change adds its documents")
    func dmv() throws {
        var s = try Self.start("dmv-renewal")
        try FormsFixture.answer(&s, FormsFixture.dmvAnswers)
        #expect(s.isComplete && s.progress.percent == 100)
        let review = FormReview(s)
        #expect(review.problems.isEmpty, "\(review.problems)")
        #expect(review.fees.map(\.id) == ["renewal", "realId", "donation"] && review.feeTotal == 47)
        let titles = review.checklist.map(\.title)
        #expect(titles.contains("Name change documents") && titles.contains("REAL ID documents"))
        #expect(!titles.contains("Proof of the new address"))
        let json = review.json
        #expect(json["answers"]?["dob"] == .string("1985-04-23") && json["answers"]?["state"] == .string("CA"))
        #expect(json["answers"]?["previousName"] == .string("Maria Garcia"))
        #expect(
            review.documentText.contains("Date of birth: 1985-04-23") && review.documentText.contains("Total: 47.00"))
        #expect(review.checklistText.contains("[ ] A certified document linking the names"))
    }

    @Test("a DMV renewal in Virginia at 80 warns about in-person renewal; no name change, no documents for it")
    func dmvVirginia() throws {
        var s = try Self.start("dmv-renewal", language: "es")
        var answers = FormsFixture.dmvAnswers
        answers[1] = "va"
        answers[3] = "1946-01-01"
        answers[5] = "no"
        answers.remove(at: 6)
        answers[8] = "23219"  // Richmond: a Virginia ZIP prefix
        try FormsFixture.answer(&s, answers)
        let review = FormReview(s)
        #expect(review.problems.count == 1 && review.problems[0].hasPrefix("note: A su edad"), "\(review.problems)")
        #expect(review.fees.map(\.id) == ["renewal", "realId"] && review.feeTotal == 42)  // VA has no donation fee
        #expect(!review.checklist.map(\.title).contains("Documentos del cambio de nombre"))
        #expect(review.json["answers"]?["previousName"] == nil)
    }

    @Test("a DS-160 completes; the spouse section appears for a married person; a security yes needs its explanation")
    func ds160() throws {
        var s = try Self.start("ds-160")
        try FormsFixture.answer(&s, FormsFixture.ds160Answers)
        #expect(s.isComplete)
        let review = FormReview(s)
        #expect(review.problems.isEmpty, "\(review.problems)")
        let steps = s.flow.steps.map(\.step.id)
        #expect(
            steps == ["identity", "spouse", "travel", "passport", "family", "security", "work", "documents", "review"])
        let fields = Set(s.flow.fields.map(\.id))
        #expect(fields.contains("securityCriminalExplanation") && !fields.contains("securityDiseaseExplanation"))
        #expect(review.json["answers"]?["surname"] == .string("ERIKSSON") && review.feeTotal == 185)
    }

    @Test("passport dates: an expiry before the end of the stay reopens the expiry with the message and the date")
    func passportRule() throws {
        var s = try Self.start("ds-160")
        let before = Array(FormsFixture.ds160Answers.prefix(22))
        try FormsFixture.answer(&s, before)
        let outcome = try s.apply(FormProposal(fieldID: "passportExpiry", value: "2027-03-10"))
        guard case .saved(_, _, let reopened) = outcome else {
            Issue.record("refused: \(outcome)")
            return
        }
        #expect(reopened.map(\.field) == ["passportExpiry"])
        #expect(reopened.first?.message == "The passport expires before your stay ends (2027-03-15); renew it first.")
        #expect(s.nextQuestion?.field.id == "passportExpiry")
    }

    /// The DS-160 answers up to the passport's issuing country, with this arrival, stay and issuing country.
    static func passportCase(arrival: String, days: String, country: String) throws -> FormSession {
        var s = try start("ds-160")
        var answers = FormsFixture.ds160Answers
        answers[11] = arrival
        answers[12] = days
        answers[20] = country
        try FormsFixture.answer(&s, Array(answers.prefix(22)))
        return s
    }

    @Test(
        "six months beyond the stay: refused for a country outside CBP's Six-Month Club, through the stay for one in it",
        arguments: [("SAU", false), ("sau", false), ("EGY", true), ("Suecia", true), ("السويد", true)])
    func sixMonthRule(country: String, exempt: Bool) throws {
        // Issue 36's case: arrival 2027-03-01, a 30-day stay, a passport expiring 2027-03-05.
        var s = try Self.passportCase(arrival: "2027-03-01", days: "30", country: country)
        guard case .saved(_, _, let through) = try s.apply(FormProposal(fieldID: "passportExpiry", value: "2027-03-05"))
        else { throw FormError.invalidRequest("refused") }
        #expect(
            through.map(\.message).contains("The passport expires before your stay ends (2027-03-31); renew it first."))
        // Valid through the stay, not six months beyond it (2027-09-30).
        guard case .saved(_, _, let beyond) = try s.apply(FormProposal(fieldID: "passportExpiry", value: "2027-06-01"))
        else { throw FormError.invalidRequest("refused") }
        if exempt {
            #expect(beyond.isEmpty, "\(country): \(beyond)")
            #expect(s.storedAnswers["passportExpiry"] == "2027-06-01")
        } else {
            #expect(beyond.map(\.field) == ["passportExpiry"], "\(country)")
            #expect(beyond.first?.message.contains("at least six months beyond your stay, until 2027-09-30") == true)
            guard case .saved(_, _, let ok) = try s.apply(FormProposal(fieldID: "passportExpiry", value: "2027-09-30"))
            else { throw FormError.invalidRequest("refused") }
            #expect(ok.isEmpty, "the day six months after the stay is enough")
        }
    }

    @Test("the family step: parents and relatives in the U.S., as the DS-160 asks; a parent born after you is refused")
    func family() throws {
        var s = try Self.start("ds-160")
        try FormsFixture.answer(&s, Array(FormsFixture.ds160Answers.prefix(23)))
        #expect(s.nextQuestion?.field.id == "fatherSurname")
        _ = try s.skip()
        _ = try s.skip()
        // A father born after the applicant (1974) is sent back at once, with the reason.
        guard
            case .saved(_, _, let reopened) = try s.apply(
                FormProposal(fieldID: "fatherDateOfBirth", value: "1990-01-01"))
        else { throw FormError.invalidRequest("refused") }
        #expect(reopened.map(\.message) == ["Your father's date of birth must be before yours; check it."])
        #expect(s.nextQuestion?.field.id == "fatherDateOfBirth")
        try FormsFixture.answer(&s, ["1945-03-04"])
        #expect(s.nextQuestion?.field.id == "fatherInUS")
        try FormsFixture.answer(&s, ["yes"])
        #expect(s.nextQuestion?.field.id == "fatherUSStatus")
        try FormsFixture.answer(&s, ["2", "ERIKSSON", "BIRGIT", "1948-05-06", "no", "yes"])
        try FormsFixture.answer(&s, ["ERIKSSON", "ERIK", "sibling", "citizen"])
        #expect(s.flow.fields.contains { $0.id == "otherRelativesInUS" } == false, "asked only without immediate ones")
        #expect(s.nextQuestion?.field.id == "securityDisease")
        let review = FormReview(s).json["answers"]
        #expect(
            review?["fatherUSStatus"] == .string("permanentResident")
                && review?["relativeRelationship"] == .string("sibling"))
        #expect(s.storedAnswers["fatherSurname"] == "", "skipped: do not know")
    }

    @Test("going back reopens the last answer; changing a branch drops the answers it no longer asks")
    func backAndChange() throws {
        var s = try Self.start("ds-160")
        try FormsFixture.answer(&s, Array(FormsFixture.ds160Answers.prefix(7)))
        #expect(s.nextQuestion?.field.id == "spouseSurname")
        #expect(try s.back() == "maritalStatus")
        #expect(s.nextQuestion?.field.id == "maritalStatus")
        try FormsFixture.answer(&s, ["married", "ERIKSSON"])
        try s.reopen("maritalStatus")
        try FormsFixture.answer(&s, ["single"])
        #expect(s.nextQuestion?.field.id == "purposeOfTrip")
        #expect(FormReview(s).json["answers"]?["spouseSurname"] == nil, "a hidden answer is not exported")
        #expect(s.storedAnswers["spouseSurname"] == "ERIKSSON", "but it is kept if the branch comes back")
    }

    @Test("changing an earlier answer re-checks the answers that depend on it; a field not in the flow is refused")
    func dependents() throws {
        var s = try Self.start("ds-160")
        try FormsFixture.answer(&s, FormsFixture.ds160Answers)
        let later = try s.apply(FormProposal(fieldID: "arrivalDate", value: "2033-01-01"))
        guard case .saved(_, _, let reopened) = later else {
            Issue.record("refused: \(later)")
            return
        }
        #expect(reopened.map(\.field) == ["passportExpiry"] && s.nextQuestion?.field.id == "passportExpiry")
        guard case .refused(let p) = try s.apply(FormProposal(fieldID: "refusalExplanation", value: "Refused in 2019."))
        else {
            Issue.record("a hidden field was accepted")
            return
        }
        #expect(p.message.contains("not asked in this form"))
    }

    /// A valid answer for every field of the shipped templates; yes/no and choices are drawn at random, the ZIP
    /// code fits the state chosen.
    static func answer(for q: FormQuestion, _ rng: inout SeededGenerator, state: String? = nil) -> String {
        switch q.field.type {
        case .yesNo:
            if let pattern = q.field.validation.pattern { return pattern }
            return rng.pick(["yes", "no", "نعم", "sí", "لا"])
        case .select: return rng.pick(q.field.options.map(\.value))
        default:
            let fixed: [String: String] = [
                "state": rng.pick(["CA", "Texas", "ny", "FL", "VA"]), "dob": "1980-02-02",
                "licenseNumber": ["CA": "D1234567", "TX": "12345678", "FL": "L123456789012"][state ?? ""] ?? "X1234",
                "addressStreet": "1 Main St",
                "addressPostalCode": ["CA": "95814", "TX": "78701", "NY": "12207", "FL": "32301", "VA": "23219"][
                    state ?? ""] ?? "12345",
                "email": "a@b.co", "phone": "5551234567",
                "dateOfBirth": "1980-02-02", "spouseDateOfBirth": "1981-03-03", "arrivalDate": "2027-05-05",
                "lastVisitDate": "2019-01-01", "passportNumber": "AB123456", "passportIssueDate": "2020-01-01",
                "passportExpiry": "2030-01-01", "appointmentDate": "2026-12-01", "usAddressStreet": "9 Elm Road",
                "usAddressState": "WA",
                "usAddressZip": "98101", "nationality": "EGY", "passportIssuingCountry": "EGY",
                "fatherDateOfBirth": "1950-01-01", "motherDateOfBirth": "1952-02-02",
                "lengthOfStayDays": "10",
                "lastVisitDays": "5", "monthlyIncome": "1000",
            ]
            if let v = fixed[q.field.id] { return v }
            return q.field.type == .name ? "SMITH" : "Something long enough"
        }
    }

    @Test(
        "random answer sequences with random going back: sections appear exactly when they apply",
        arguments: ["dmv-renewal", "ds-160"])
    func randomFlows(template: String) throws {
        try forAll(cases: 100, seed: template == "ds-160" ? 0x160 : 0xD77) { rng, c in
            var s = try Self.start(template)
            var turns = 0
            while let q = s.nextQuestion, turns < 400 {
                turns += 1
                if turns > 2 && rng.bool(0.1) {
                    try s.back()
                    continue
                }
                let outcome = try s.apply(
                    FormProposal(fieldID: q.field.id, value: Self.answer(for: q, &rng, state: s.storedAnswers["state"]))
                )
                if case .refused(let p) = outcome { Issue.record("\(c): \(q.field.id) refused: \(p)") }
            }
            #expect(s.isComplete && s.progress.percent == 100, c.label)
            let flow = s.flow
            let a = flow.answers
            let steps = Set(flow.steps.map(\.step.id))
            for step in s.template.steps {
                let shown = step.conditionalLogic.showIf?.holds(a) ?? true
                if !shown { #expect(!steps.contains(step.id), "\(c) \(step.id) shown") }
            }
            if template == "ds-160" {
                #expect(steps.contains("spouse") == (a["maritalStatus"] == "married"), c.label)
                #expect(steps.contains("previousTravel") == (a["previousUSTravel"] == "yes"), c.label)
                #expect(steps.contains("refusal") == (a["previousRefusal"] == "yes"), c.label)
                for q in ["securityDisease", "securityCriminal", "securityDrugs", "securityFraud"] {
                    #expect((a[q + "Explanation"] != nil) == (a[q] == "yes"), "\(c) \(q)")
                }
                #expect((a["schoolName"] != nil) == (a["occupation"] == "student"), c.label)
            } else {
                #expect((a["previousName"] != nil) == (a["nameChanged"] == "yes"), c.label)
                #expect((a["donation"] != nil) == (a["organDonor"] == "yes"), c.label)
                let fees = FormReview(s).fees.map(\.id)
                #expect(fees.contains("realId") == (a["realId"] == "yes"), c.label)
            }
            let exported = FormReview(s).json["answers"]?.objectValue?.keys.sorted() ?? []
            #expect(exported == flow.fields.map(\.id).sorted(), c.label)
        }
    }
}
