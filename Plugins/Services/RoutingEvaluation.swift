import AbsherData
import Foundation
import SanadChat
import SanadCore

/// The routing evaluation (`Plugins/Services/Evaluation/questions.json`): each question through a chat with the
/// hosted plugins, scored on what the person reads — the service (from the reply's link), whose service it is
/// (from the names in the reply), every facet asked answered, the reply's language, and no number or date that is
/// not in the data.
public enum RoutingEvaluation {
    /// One question of the set.
    public struct Question: Sendable, Equatable {
        public var text: String
        /// `en`, `gulf` or `msa`.
        public var style: String
        /// nil: no service covers it (the honest "I can help with…" is expected).
        public var service: String?
        public var facets: [ServiceFacet]
        /// `self`, `dependent:<id>`, `worker:<id>`, `vehicle:<id>`; nil for an uncovered question.
        public var subject: String?
    }

    /// How one question fared.
    public struct Outcome: Sendable {
        public var question: Question
        public var reply: String
        public var service: String?
        public var subject: String?
        public var routed: Bool
        public var facetsAnswered: Int
        public var languageRight: Bool
        public var foreignNumbers: [String]
    }

    /// The evaluation set shipped beside this plugin's sources.
    public static var defaultQuestionsURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Evaluation/questions.json")
    }

    /// Reads the set strictly: an unknown facet or a missing key names the question.
    public static func load(_ url: URL) throws -> [Question] {
        let json = try JSONValue.parse(try Data(contentsOf: url))
        guard let list = json["questions"]?.arrayValue else {
            throw SanadError.engine("\(url.path): missing the 'questions' array")
        }
        return try list.enumerated().map { i, q in
            guard let text = q["text"]?.stringValue, let style = q["style"]?.stringValue,
                ["en", "gulf", "msa"].contains(style), let facets = q["facets"]?.arrayValue
            else { throw SanadError.engine("\(url.path): questions[\(i)]: needs text, style (en|gulf|msa) and facets") }
            return Question(
                text: text, style: style, service: q["service"]?.stringValue,
                facets: try facets.map { f in
                    guard let facet = f.stringValue.flatMap(ServiceFacet.init(rawValue:)) else {
                        throw SanadError.engine(
                            "\(url.path): questions[\(i)].facets: '\(f)' is not one of "
                                + ServiceFacet.allCases.map(\.rawValue).joined(separator: ", "))
                    }
                    return facet
                }, subject: q["subject"]?.stringValue)
        }
    }

    /// Every number the person's data and the services file hold, the days from `today` to each date of the data,
    /// and the count and total of the unpaid violations: the only numbers a reply may state.
    public static func allowedNumbers(data: UserData, catalog: ServiceCatalog, today: CivilDate) throws -> Set<String> {
        var numbers = Set<String>()
        for url in [data.file, catalog.file] {
            numbers.formUnion(digitRuns(try String(contentsOf: url, encoding: .utf8)).map { String(Int($0) ?? -1) })
        }
        let text = try String(contentsOf: data.file, encoding: .utf8)
        for date in text.split(separator: "\"").compactMap({ CivilDate(iso: String($0)) }) {
            numbers.insert("\(abs(today.days(until: date)))")
        }
        let unpaid = data.violations.filter { !$0.paid }
        numbers.insert("\(unpaid.count)")
        numbers.insert("\(unpaid.reduce(0) { $0 + $1.amountSAR })")
        return numbers
    }

    /// The service a reply's link names: a service page's id, `dependents`, or the renewal page's service.
    static func service(of link: DeepLink?) -> String? {
        guard let link else { return nil }
        switch link.serviceType {
        case ServicesPlugin.infoLinkType: return link.alertId
        case "dependents": return "dependents"
        default: return link.serviceType
        }
    }

    /// Whose service a reply is about: the dependent its link names, a household member or vehicle it names, else
    /// the user.
    static func subject(of content: String, link: DeepLink?, data: UserData) -> String? {
        guard let link else { return nil }
        if link.serviceType == "dependents" { return "dependent:\(link.alertId)" }
        for m in data.household where content.contains(m.name) || m.english["name"].map(content.contains) == true {
            return "\(m.role.rawValue):\(m.id)"
        }
        for v in data.vehicles where content.contains(v.plate) { return "vehicle:\(v.id)" }
        return "self"
    }

    /// Whether `text` answers `facet`: its label, a date for an expiry, the violations' sentence for their amount.
    public static func answers(_ facet: ServiceFacet, _ text: String, in language: ChatLanguage) -> Bool {
        let violations = ["المخالفات غير المسددة", "لا توجد مخالفات", "unpaid violation"]
        if violations.contains(where: text.contains) && [.fee, .lateFine, .expiry].contains(facet) { return true }
        if facet == .expiry {
            let none = ["لا يوجد في بياناتك", "There is no", "ليس لها تاريخ", "no expiry date", "لا توجد مركبة"]
            return !isoDates(in: text).isEmpty || none.contains(where: text.contains)
        }
        return text.contains(ServiceAnswer.label(facet, in: language))
    }

    /// Runs every question through a fresh chat with `plugins` at `now` (templates: the engine `loadEngine` gives
    /// is loaded, as a chat needs, but never phrases), and scores it.
    public static func run(
        _ questions: [Question], plugins: [any FeaturePlugin], data: UserData, catalog: ServiceCatalog, now: Date,
        timeZone: TimeZone = AbsherSettings.defaultTimeZone, loadEngine: @escaping EngineLoader
    ) async throws -> [Outcome] {
        let today = CivilDate.today(now, in: timeZone)
        // The "I can help with…" list names what the hosted plugins do (a form called DS-160): data too.
        let capabilities = ChatLanguage.allCases.flatMap { l in plugins.flatMap { $0.capabilities(in: l) } }
        let allowed = try allowedNumbers(data: data, catalog: catalog, today: today).union(
            digitRuns(capabilities.joined(separator: " ")).map { String(Int($0) ?? -1) })
        var out: [Outcome] = []
        for q in questions {
            var configuration = AbsherSettings.product.configuration(language: .arabic)
            configuration.groundedPhrasing = .template
            let session = ChatSession(
                plugins: plugins, configuration: configuration, now: { now }, loadEngine: loadEngine)
            await session.open()
            try await session.send(q.text)
            guard let reply = await session.messages.last, !reply.isUser else {
                throw SanadError.engine("no reply to '\(q.text)'")
            }
            let language: ChatLanguage = q.style == "en" ? .english : .arabic
            let service = service(of: reply.deepLink)
            let subject = subject(of: reply.content, link: reply.deepLink, data: data)
            out.append(
                Outcome(
                    question: q, reply: reply.content, service: service, subject: subject,
                    routed: service == q.service && subject == q.subject,
                    // A facet answered about another service is not answered.
                    facetsAnswered: service != q.service
                        ? 0 : q.facets.filter { answers($0, reply.content, in: language) }.count,
                    languageRight: ChatLanguage.of(reply.content) == language,
                    foreignNumbers: digitRuns(normalizeArabic(reply.content)).filter {
                        !allowed.contains(String(Int($0) ?? -1))
                    }))
        }
        return out
    }

    /// The summary: per style and in all, questions, routed right, facets answered of asked, reply language right,
    /// replies with a number not in the data; as Markdown rows after a header naming `method`.
    public static func table(_ outcomes: [Outcome], method: String) -> String {
        var lines = [
            "| method | style | questions | routed right (service + subject) | facets answered | reply in the asker's language | replies with a number not in the data |",
            "|---|---|---|---|---|---|---|",
        ]
        let names = ["en": "English", "gulf": "Gulf dialect", "msa": "MSA"]
        for style in ["en", "gulf", "msa", "all"] {
            let o = outcomes.filter { style == "all" || $0.question.style == style }
            guard !o.isEmpty else { continue }
            let routed = o.filter(\.routed).count
            let asked = o.reduce(0) { $0 + $1.question.facets.count }
            let answered = o.reduce(0) { $0 + $1.facetsAnswered }
            let language = o.filter(\.languageRight).count
            let foreign = o.filter { !$0.foreignNumbers.isEmpty }.count
            lines.append(
                "| \(method) | \(names[style] ?? style) | \(o.count) | \(routed) (\(percent(routed, o.count))) | "
                    + "\(answered)/\(asked) (\(percent(answered, asked))) | \(language) (\(percent(language, o.count))) | \(foreign) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    static func percent(_ n: Int, _ d: Int) -> String {
        d == 0 ? "—" : String(format: "%.1f %%", 100 * Double(n) / Double(d))
    }

    /// The questions that were not routed right or lost a facet, one line each.
    public static func misses(_ outcomes: [Outcome]) -> [String] {
        outcomes.filter {
            !$0.routed || $0.facetsAnswered < $0.question.facets.count || !$0.languageRight
                || !$0.foreignNumbers.isEmpty
        }.map {
            "\($0.question.text) → \($0.service ?? "none")/\($0.subject ?? "none") (expected "
                + "\($0.question.service ?? "none")/\($0.question.subject ?? "none"), facets "
                + "\($0.facetsAnswered)/\($0.question.facets.count)"
                + ($0.foreignNumbers.isEmpty
                    ? "" : ", numbers not in the data: \($0.foreignNumbers.joined(separator: " "))")
                + "): \($0.reply.prefix(160))"
        }
    }
}
