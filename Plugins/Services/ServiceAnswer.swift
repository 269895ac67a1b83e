import AbsherData
import SanadChat
import SanadCore

/// What a typed question asks about a service. None named → an overview (every part).
public enum ServiceAspect: String, Sendable, CaseIterable {
    /// When the user's document expires and how many days remain.
    case expiry
    case fee
    case requirements

    /// The words that ask for each aspect (Arabic, Gulf dialect and English; see `TypedQuestion`).
    public var keywords: [String] {
        switch self {
        case .expiry:
            return [
                "متى", "ينتهي*", "تنتهي*", "انتهاء", "انتهت", "انتهى", "خلص*", "يخلص*", "تخلص*", "صلاحي*", "باقي",
                "كم يوم", "تاريخ*", "expir*", "when", "valid*", "days left",
            ]
        case .fee:
            return [
                "رسوم*", "رسم", "سعر*", "بكم", "كم سعر", "تكلف*", "يكلف*", "كلف*", "فلوس", "مبلغ*", "كم ادفع",
                "fee*", "cost*", "price*", "how much", "pay",
            ]
        case .requirements:
            return [
                "متطلبات*", "شروط*", "شرط", "احتاج*", "يحتاج*", "مطلوب*", "المطلوب", "اوراق*", "مستندات*", "وش يبون",
                "ايش يبون", "require*", "need*", "documents",
            ]
        }
    }

    /// The aspects `question` asks about, in this enum's order; empty when it names none.
    public static func asked(in question: TypedQuestion) -> [ServiceAspect] {
        allCases.filter { question.mentions($0.keywords) }
    }
}

/// The grounded answer to a typed question about a service: template sentences built only from the knowledge base
/// and the user's document, the facts the model's wording must keep, and the service's link.
public enum ServiceAnswer {
    /// `جواز السفر ينتهي في 2027-02-05، باقي 75 يوماً.` (or `… انتهى في …، منذ 3 أيام.` / `… ينتهي اليوم (…).`);
    /// `Your passport expires on 2027-02-05, 75 days left.` in English.
    static func status(
        of doc: UserDocument, service: ServiceInfo, today: CivilDate, in language: ChatLanguage = .arabic
    ) -> String {
        let name = service.documentName(in: language) ?? service.name(in: language)
        let days = today.days(until: doc.expiryDate)
        let date = doc.expiryDate
        switch language {
        case .arabic:
            if days < 0 {
                return
                    "\(name) \(service.documentFeminine ? "انتهت" : "انتهى") في \(date)، منذ \(arabicDays(-days, genitive: true))."
            }
            let verb = service.documentFeminine ? "تنتهي" : "ينتهي"
            if days == 0 { return "\(name) \(verb) اليوم (\(date))." }
            return "\(name) \(verb) في \(date)، باقي \(arabicDays(days))."
        case .english:
            if days < 0 { return "Your \(name) expired on \(date), \(englishCount(-days, .day)) ago." }
            if days == 0 { return "Your \(name) expires today (\(date))." }
            return "Your \(name) expires on \(date), \(englishCount(days, .day)) left."
        }
    }

    static func fees(of service: ServiceInfo, doc: UserDocument?, in language: ChatLanguage = .arabic) -> String {
        let arabic = language == .arabic
        let lines = service.fees.map { $0.sentence(in: language) }
        var text =
            service.fees.isEmpty
            ? (arabic
                ? "ليس لهذه الخدمة رسوم ثابتة في دليل الخدمات."
                : "This service has no fixed fee in the services guide.")
            : (arabic ? "الرسوم: " + lines.joined(separator: "، و") : "Fees: " + lines.joined(separator: ", and "))
                + "."
        if let fee = doc?.renewalFeeSAR, let name = service.documentName(in: language) {
            text +=
                arabic
                ? " ورسوم تجديد \(name) المسجلة في بياناتك \(fee) ريال."
                : " The renewal fee of your \(name) in your data is \(fee) SAR."
        }
        return text
    }

    static func requirements(of service: ServiceInfo, in language: ChatLanguage = .arabic) -> String {
        let items = service.requirements(in: language)
        switch language {
        case .arabic:
            return items.isEmpty
                ? "لا متطلبات مسجلة لهذه الخدمة في دليل الخدمات." : "المتطلبات: " + items.joined(separator: "، ") + "."
        case .english:
            return items.isEmpty
                ? "No requirements are recorded for this service in the services guide."
                : "Requirements: " + items.joined(separator: ", ") + "."
        }
    }

    /// The sentences that answer `aspects` (all of them for an empty list), in order: description (overview only),
    /// expiry, fees, requirements.
    static func sentences(
        service: ServiceInfo, doc: UserDocument?, today: CivilDate, aspects: [ServiceAspect],
        in language: ChatLanguage = .arabic
    ) -> [String] {
        let all = aspects.isEmpty
        let arabic = language == .arabic
        var out: [String] = []
        if all { out.append(service.description(in: language)) }
        if all || aspects.contains(.expiry) {
            if let doc {
                out.append(status(of: doc, service: service, today: today, in: language))
            } else if let name = service.documentName(in: language) {
                out.append(arabic ? "لا يوجد في بياناتك \(name)." : "There is no \(name) in your data.")
            } else if !all {
                out.append(
                    arabic
                        ? "هذه الخدمة ليس لها تاريخ انتهاء في بياناتك."
                        : "This service has no expiry date in your data.")
            }
        }
        if all || aspects.contains(.fee) { out.append(fees(of: service, doc: doc, in: language)) }
        if all || aspects.contains(.requirements) { out.append(requirements(of: service, in: language)) }
        return out
    }

    /// The link the answer carries: the renewal page of the user's document, or the service's information page.
    static func link(service: ServiceInfo, doc: UserDocument?, in language: ChatLanguage = .arabic) -> DeepLink {
        let title = service.name(in: language)
        if let doc, service.linkType != ServicesPlugin.infoLinkType {
            return DeepLink(serviceType: service.linkType, title: title, alertId: doc.id)
        }
        return DeepLink(serviceType: ServicesPlugin.infoLinkType, title: title, alertId: service.id)
    }

    /// The whole grounded reply to `question` about `service`, in `language`.
    public static func grounded(
        question: String, service: ServiceInfo, doc: UserDocument?, today: CivilDate, aspects: [ServiceAspect],
        in language: ChatLanguage = .arabic
    ) -> GroundedReply {
        let arabic = language == .arabic
        let name = service.name(in: language)
        let lines = sentences(service: service, doc: doc, today: today, aspects: aspects, in: language)
        let fallback =
            "\(name): " + lines.joined(separator: " ")
            + (arabic ? " تقدر تبدأ من الرابط أدناه." : " You can start from the link below.")
        var names = [name] + (service.documentName(in: language).map { [$0] } ?? [])
        names += service.keywords.filter { $0.hasSuffix("*") && (arabicLetterShare($0) > 0.5) == arabic }.map {
            String($0.dropLast())
        }
        var facts = [GroundingFact(name: arabic ? "الخدمة (\(name))" : "the service (\(name))", accepted: names)]
        if let doc, aspects.isEmpty || aspects.contains(.expiry) {
            let d = abs(today.days(until: doc.expiryDate))
            facts.append(
                GroundingFact(
                    name: arabic ? "تاريخ الانتهاء (\(doc.expiryDate))" : "the expiry date (\(doc.expiryDate))",
                    accepted: ["\(doc.expiryDate)"]
                        + (arabic
                            ? [arabicDays(d), arabicDays(d, genitive: true), "\(d) يوم", "\(d) يوما", "\(d) أيام"]
                            : ["\(d) day"])))
        }
        if aspects.contains(.fee) {
            if let fee = doc?.renewalFeeSAR ?? service.fees.first?.amountSAR {
                let stated: [String] =
                    arabic
                    ? (fee == 0 ? ["بدون رسوم", "مجان"] : ["\(fee) ريال", "\(fee) ر"])
                    : (fee == 0 ? ["no fee", "free"] : ["\(fee) SAR", "\(fee) riyal", "SAR \(fee)"])
                facts.append(GroundingFact(name: arabic ? "الرسوم (\(fee))" : "the fee (\(fee))", accepted: stated))
            }
        }
        if aspects.contains(.requirements), let first = service.requirements(in: language).first {
            facts.append(
                GroundingFact(name: arabic ? "المتطلبات (\(first))" : "the requirements (\(first))", accepted: [first]))
        }
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in \(arabic ? "Arabic" : "English") only, in two or \
            three short sentences. Use only these facts, exactly, and add no other numbers or dates:
            - \(arabic ? "الخدمة" : "Service"): \(name)
            \(lines.map { "- " + $0 }.joined(separator: "\n"))
            Answer the user's question, then tell them to start from the link below.
            """
        return GroundedReply(
            messages: [.system(system), .user(question)], facts: facts,
            allowedNumbers: digitRuns(normalizeArabic(fallback)), language: language, fallback: fallback,
            deepLink: link(service: service, doc: doc, in: language))
    }
}
