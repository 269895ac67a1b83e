import AbsherData
import SanadChat
import SanadCore

/// The grounded answer to a routed question: template sentences built only from the knowledge base and the user's
/// data (one per facet asked, every facet answered; an unknown fact is said to be not in Sanad's data, with the
/// service's page), the facts the model's wording must keep, and the service's link.
public enum ServiceAnswer {
    /// `"الرسوم: ليست في بياناتي، راجع صفحة الخدمة: https://…"`: how an unknown fact is answered.
    static func unknown(_ label: String, _ service: ServiceInfo, in language: ChatLanguage) -> String {
        language == .arabic
            ? "\(label): ليست في بياناتي، راجع صفحة الخدمة (الرابط أدناه أو \(service.source.url))."
            : "\(label): not in my data; check the service page (the link below, or \(service.source.url))."
    }

    /// The label a facet's sentence starts with (`الرسوم`, `Fees`); the evaluation looks for it.
    public static func label(_ facet: ServiceFacet, in language: ChatLanguage) -> String {
        let arabic = language == .arabic
        switch facet {
        case .fee: return arabic ? "الرسوم" : "Fees"
        case .lateFine: return arabic ? "غرامة التأخير" : "Late fine"
        case .requirements: return arabic ? "المتطلبات" : "Requirements"
        case .steps: return arabic ? "الخطوات" : "Steps"
        case .eligibility: return arabic ? "من يحق له" : "Who may use it"
        case .expiry: return arabic ? "الانتهاء" : "Expiry"
        case .place: return arabic ? "مكان الخدمة" : "Where"
        }
    }

    /// `Your passport expires on 2027-02-05, 75 days left.`; `بنتك سارة: جواز السفر ينتهي في …`.
    static func status(
        name: String, feminine: Bool, owner: String?, date: CivilDate, today: CivilDate, in language: ChatLanguage
    ) -> String {
        let days = today.days(until: date)
        switch language {
        case .arabic:
            // `جواز السفر لبنتك سارة ينتهي …`
            let subject = name + (owner.map { " ل\($0)" } ?? "")
            if days < 0 {
                return
                    "\(subject) \(feminine ? "انتهت" : "انتهى") في \(date)، منذ \(arabicDays(-days, genitive: true))."
            }
            let verb = feminine ? "تنتهي" : "ينتهي"
            if days == 0 { return "\(subject) \(verb) اليوم (\(date))." }
            return "\(subject) \(verb) في \(date)، باقي \(arabicDays(days))."
        case .english:
            let whose = owner.map { "\($0)'s" } ?? "Your"
            if days < 0 { return "\(whose) \(name) expired on \(date), \(englishCount(-days, .day)) ago." }
            if days == 0 { return "\(whose) \(name) expires today (\(date))." }
            return "\(whose) \(name) expires on \(date), \(englishCount(days, .day)) left."
        }
    }

    /// `بنتك سارة` / `Your daughter Sara`.
    static func owner(_ m: HouseholdMember, in language: ChatLanguage) -> String {
        language == .arabic
            ? "\(m.relationship) \(m.name)"
            : capitalized("\(m.relationship(in: language)) \(m.name(in: language))")
    }

    /// The expiry sentence for the route's subject: the user's or a member's document, the vehicle's registration.
    static func expiry(_ route: ServiceRoute, doc: UserDocument?, today: CivilDate, in language: ChatLanguage)
        -> String?
    {
        let arabic = language == .arabic
        let service = route.service
        let docName = service.documentName(in: language)
        switch route.subject {
        case .vehicle(let v):
            guard service.id == "vehicle_registration_renewal" else { return nil }
            let make = v.make(in: language).map { "\($0) " } ?? ""
            return status(
                name: arabic ? "رخصة سير \(make)(\(v.plate))" : "registration of the \(make)(\(v.plate))",
                feminine: true, owner: nil, date: v.registrationExpiry, today: today, in: language)
        case .member(let m):
            guard let kind = service.document, let docName else { return nil }
            guard let held = m.documents.first(where: { $0.kind == kind }) else {
                return arabic
                    ? "لا يوجد في بياناتك \(docName) ل\(owner(m, in: language))."
                    : "There is no \(docName) of \(owner(m, in: language).lowercasedFirst) in your data."
            }
            return status(
                name: docName, feminine: service.documentFeminine, owner: owner(m, in: language),
                date: held.expiryDate, today: today, in: language)
        case .user:
            if let doc, let docName {
                return status(
                    name: docName, feminine: service.documentFeminine, owner: nil, date: doc.expiryDate, today: today,
                    in: language)
            }
            if let docName { return arabic ? "لا يوجد في بياناتك \(docName)." : "There is no \(docName) in your data." }
            if service.id == "vehicle_registration_renewal" {
                return arabic ? "لا توجد مركبة في بياناتك." : "There is no vehicle in your data."
            }
            return nil
        }
    }

    /// `عليك مخالفتان غير مسددتين …`: the user's unpaid violations, their total and due dates; nil when the data
    /// has none recorded (the sentence then says so).
    static func violations(_ data: UserData, today: CivilDate, in language: ChatLanguage) -> String {
        let unpaid = data.violations.filter { !$0.paid }.sorted { $0.dueDate < $1.dueDate }
        let arabic = language == .arabic
        guard !unpaid.isEmpty else {
            return arabic ? "لا توجد مخالفات غير مسددة في بياناتك." : "There are no unpaid violations in your data."
        }
        let total = unpaid.reduce(0) { $0 + $1.amountSAR }
        let items = unpaid.map { v -> String in
            let days = today.days(until: v.dueDate)
            let kind = (arabic ? v.kind : v.englishKind ?? v.kind).map { " (\($0))" } ?? ""
            if arabic {
                let when =
                    days >= 0 ? "بعد \(arabicDays(days, genitive: true))" : "منذ \(arabicDays(-days, genitive: true))"
                return "\(v.amountSAR) ريال\(kind) آخر موعد لسدادها \(v.dueDate) (\(when))"
            }
            let when = days >= 0 ? "in \(englishCount(days, .day))" : "\(englishCount(-days, .day)) ago"
            return "\(v.amountSAR) SAR\(kind) due on \(v.dueDate) (\(when))"
        }
        return arabic
            ? "المخالفات غير المسددة في بياناتك: \(arabicCount(unpaid.count, .violation))، مجموعها \(total) ريال: "
                + items.joined(separator: "، و") + "."
            : "Your \(englishCount(unpaid.count, .unpaidViolation)) \(unpaid.count == 1 ? "totals" : "total") \(total) SAR: "
                + items.joined(separator: "; ")
                + "."
    }

    static func feeList(_ fees: [ServiceInfo.Fee], in language: ChatLanguage) -> String {
        fees.map { $0.sentence(in: language) }.joined(separator: language == .arabic ? "، و" : ", and ")
    }

    /// The sentence answering `facet`.
    static func sentence(
        _ facet: ServiceFacet, route: ServiceRoute, doc: UserDocument?, data: UserData, today: CivilDate,
        in language: ChatLanguage
    ) -> String {
        let s = route.service
        let arabic = language == .arabic
        let label = label(facet, in: language)
        func list(_ items: [String]?) -> String {
            guard let items else { return unknown(label, s, in: language) }
            if items.isEmpty { return arabic ? "\(label): لا شيء مسجل." : "\(label): none recorded." }
            return "\(label): " + items.joined(separator: arabic ? "، " : ", ") + "."
        }
        switch facet {
        case .fee:
            if s.id == "traffic_violations" { return violations(data, today: today, in: language) }
            guard let fees = s.fees else { return unknown(label, s, in: language) }
            var text =
                fees.isEmpty
                ? (arabic ? "\(label): لا رسوم لهذه الخدمة." : "\(label): this service has no fee.")
                : "\(label): \(feeList(fees, in: language))."
            if case .user = route.subject, let fee = doc?.renewalFeeSAR, let name = s.documentName(in: language) {
                text +=
                    arabic
                    ? " ورسوم تجديد \(name) المسجلة في بياناتك \(fee) ريال."
                    : " The renewal fee of your \(name) in your data is \(fee) SAR."
            }
            return text
        case .lateFine:
            if s.id == "traffic_violations" { return violations(data, today: today, in: language) }
            guard let fines = s.lateFines else { return unknown(label, s, in: language) }
            return fines.isEmpty
                ? (arabic ? "\(label): لا غرامة تأخير لهذه الخدمة." : "\(label): this service has no late fine.")
                : "\(label): \(feeList(fines, in: language))."
        case .requirements: return list(s.requirements(in: language))
        case .steps: return list(s.steps(in: language))
        case .eligibility:
            return s.eligibility(in: language).map { "\(label): \($0)" } ?? unknown(label, s, in: language)
        case .place:
            return s.whereText(in: language).map { "\(label): \($0)." } ?? unknown(label, s, in: language)
        case .expiry:
            if s.id == "traffic_violations" { return violations(data, today: today, in: language) }
            return expiry(route, doc: doc, today: today, in: language)
                ?? (arabic
                    ? "\(label): هذه الخدمة ليس لها تاريخ انتهاء في بياناتك."
                    : "\(label): this service has no expiry date in your data.")
        }
    }

    /// The sentences that answer the route, in order: the description and the subject's status for an overview,
    /// then one per facet asked (an overview: expiry, fees, where). A question about steps also says when the
    /// subject's document expires.
    static func sentences(
        _ route: ServiceRoute, doc: UserDocument?, data: UserData, today: CivilDate, in language: ChatLanguage
    ) -> [String] {
        var facets = route.facets
        var out: [String] = []
        if facets.isEmpty {
            out.append(route.service.description(in: language))
            facets = [.expiry, .fee, .place]
        } else if facets.contains(.steps), !facets.contains(.expiry) {
            facets.append(.expiry)
        }
        for facet in facets {
            // An expiry the question did not ask for is left out when the subject has none to state.
            let implied = !route.facets.contains(facet)
            if facet == .expiry, implied, route.service.id != "traffic_violations",
                expiry(route, doc: doc, today: today, in: language) == nil
            {
                continue
            }
            let line = sentence(facet, route: route, doc: doc, data: data, today: today, in: language)
            if !out.contains(line) { out.append(line) }
        }
        return out
    }

    /// The link the answer carries: the renewal page of the user's own document, or the service's information page.
    static func link(service: ServiceInfo, doc: UserDocument?, in language: ChatLanguage = .arabic) -> DeepLink {
        let title = service.name(in: language)
        if let doc, service.linkType != ServicesPlugin.infoLinkType {
            return DeepLink(serviceType: service.linkType, title: title, alertId: doc.id)
        }
        return DeepLink(serviceType: ServicesPlugin.infoLinkType, title: title, alertId: service.id)
    }

    /// The whole grounded reply to `question` on `route`, in `language`.
    public static func grounded(
        question: String, route: ServiceRoute, doc: UserDocument?, data: UserData, today: CivilDate,
        in language: ChatLanguage = .arabic
    ) -> GroundedReply {
        let arabic = language == .arabic
        let service = route.service
        var name = service.name(in: language)
        let lines = sentences(route, doc: doc, data: data, today: today, in: language)
        // Whose service it is, unless the answer already says it.
        switch route.subject {
        case .member(let m) where !lines.contains(where: { $0.contains(m.name(in: language)) }):
            name += " — " + owner(m, in: language)
        case .vehicle(let v) where !lines.contains(where: { $0.contains(v.plate) }):
            name += " — " + ([v.make(in: language), "(\(v.plate))"].compactMap { $0 }.joined(separator: " "))
        default: break
        }
        let fallback =
            "\(name): " + lines.joined(separator: " ")
            + (arabic ? " تقدر تبدأ من الرابط أدناه." : " You can start from the link below.")
        var names = [service.name(in: language)] + (service.documentName(in: language).map { [$0] } ?? [])
        names += service.keywords.filter { $0.hasSuffix("*") && (arabicLetterShare($0) > 0.5) == arabic }.map {
            String($0.dropLast())
        }
        var facts = [
            GroundingFact(name: arabic ? "الخدمة (\(service.name))" : "the service (\(name))", accepted: names)
        ]
        let dates = Set(lines.flatMap { isoDates(in: $0) })
        for date in dates.sorted() {
            facts.append(
                GroundingFact(name: arabic ? "التاريخ (\(date))" : "the date (\(date))", accepted: [date]))
        }
        if route.facets.contains(.fee), let fee = doc?.renewalFeeSAR ?? service.fees?.first?.amountSAR {
            let stated: [String] =
                arabic
                ? (fee == 0 ? ["بدون رسوم", "مجان"] : ["\(fee) ريال", "\(fee) ر"])
                : (fee == 0 ? ["no fee", "free"] : ["\(fee) SAR", "\(fee) riyal", "SAR \(fee)"])
            facts.append(GroundingFact(name: arabic ? "الرسوم (\(fee))" : "the fee (\(fee))", accepted: stated))
        }
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in \(arabic ? "Arabic" : "English") only, in two or \
            three short sentences. Use only these facts, exactly, and add no other numbers or dates. Where a fact \
            says it is not in the data, say so and point to the link:
            - \(arabic ? "الخدمة" : "Service"): \(name)
            \(lines.map { "- " + $0 }.joined(separator: "\n"))
            Answer the user's question, then tell them to start from the link below.
            """
        return GroundedReply(
            messages: [.system(system), .user(question)], facts: facts,
            allowedNumbers: digitRuns(normalizeArabic(fallback)), language: language, fallback: fallback,
            deepLink: link(service: service, doc: route.subject == .user ? doc : nil, in: language))
    }
}

/// The `YYYY-MM-DD` dates in `text`.
func isoDates(in text: String) -> [String] {
    text.split(whereSeparator: { !($0.isNumber || $0 == "-") }).map(String.init).filter {
        CivilDate(iso: $0) != nil
    }
}

extension String {
    /// The text with its first letter in lower case (`Your driver` → `your driver`).
    var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
