import AbsherData
import SanadChat
import SanadCore

/// How the reply to a tapped alert chip is asked for and checked (see `GroundedReply`).
public enum AlertReply {
    /// The days as said in a sentence: `باقي 45 يوماً` / `تنتهي اليوم` / `انتهت منذ 3 أيام`; in English `45 days left`
    /// / `expires today` / `expired 3 days ago`.
    static func remaining(_ alert: ProactiveAlert, in language: ChatLanguage = .arabic) -> String {
        let d = alert.daysRemaining
        switch language {
        case .arabic:
            if d < 0 {
                return "\(alert.serviceType.isFeminine ? "انتهت" : "انتهى") منذ \(arabicDays(-d, genitive: true))"
            }
            return d == 0 ? "تنتهي اليوم" : "باقي \(arabicDays(d))"
        case .english:
            if d < 0 { return "expired \(englishCount(-d, .day)) ago" }
            return d == 0 ? "expires today" : "\(englishCount(d, .day)) left"
        }
    }

    /// The template sentence: the title, the days remaining, the expiry date, the service and fee, and the call to
    /// action. Always correct; used when the generated text fails the check.
    public static func fallback(for alert: ProactiveAlert, in language: ChatLanguage = .arabic) -> String {
        let s = alert.serviceType
        let date = alert.document.expiryDate
        let document = s.documentName(in: language)
        var text = "\(alert.title(in: language)): "
        switch language {
        case .arabic:
            let expires = s.isFeminine ? "تنتهي" : "ينتهي"
            if alert.isOverdue {
                text +=
                    "\(s.isFeminine ? "انتهت" : "انتهى") \(document) منذ \(arabicDays(-alert.daysRemaining, genitive: true)) (في \(date))."
            } else if alert.daysRemaining == 0 {
                text += "\(expires) \(document) اليوم (\(date))."
            } else {
                text += "باقي \(arabicDays(alert.daysRemaining)) على انتهاء \(document) (\(expires) في \(date))."
            }
            text += " \(s.isFeminine ? "جدّدها" : "جدّده") الآن من خدمة \(s.serviceName(in: language))"
            if let fee = alert.document.renewalFeeSAR { text += "، الرسوم \(fee) ريال" }
            return text + "، بالضغط على الرابط أدناه."
        case .english:
            if alert.isOverdue {
                text += "your \(document) expired \(englishCount(-alert.daysRemaining, .day)) ago (on \(date))."
            } else if alert.daysRemaining == 0 {
                text += "your \(document) expires today (\(date))."
            } else {
                text += "\(englishCount(alert.daysRemaining, .day)) left until your \(document) expires (on \(date))."
            }
            text += " Renew it now through the \(s.serviceName(in: language)) service"
            if let fee = alert.document.renewalFeeSAR { text += ", fee \(fee) SAR" }
            return text + ", with the link below."
        }
    }

    /// The prompt: a system message with the facts and the instructions (in English, which small models follow
    /// best), then the chip text as the user's turn. No example reply is included: the template sentence alone is
    /// about 170 tokens in SmolLM2's vocabulary, which would more than double the prompt on a small device.
    public static func messages(
        for alert: ProactiveAlert, userText: String, in language: ChatLanguage = .arabic
    ) -> [ChatMessage] {
        let s = alert.serviceType
        let fee = alert.document.renewalFeeSAR
        var facts: [String]
        switch language {
        case .arabic:
            facts = [
                "- العنوان: \(alert.title(in: language))",
                alert.isOverdue ? "- الحالة: \(remaining(alert))" : "- المتبقي: \(remaining(alert))",
                "- تاريخ الانتهاء: \(alert.document.expiryDate)", "- الخدمة: \(s.serviceName(in: language))",
            ]
            if let fee { facts.append("- الرسوم: \(fee) ريال") }
        case .english:
            facts = [
                "- Title: \(alert.title(in: language))", "- Status: \(remaining(alert, in: language))",
                "- Expiry date: \(alert.document.expiryDate)", "- Service: \(s.serviceName(in: language))",
            ]
            if let fee { facts.append("- Fee: \(fee) SAR") }
        }
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in \(language == .arabic ? "Arabic" : "English") only, in one or two \
            short sentences. Use these facts exactly and add no other numbers:
            \(facts.joined(separator: "\n"))
            Say the title and \(
                alert.isOverdue
                    ? "that it expired \(-alert.daysRemaining) days ago" : "that \(alert.daysRemaining) days remain"), \
            then ask the user to renew now with the link below.
            """
        return [.system(system), .user(userText)]
    }

    /// The facts the text must state: the document (by its title or name) and the days remaining (or, overdue, the
    /// days since it expired).
    public static func facts(for alert: ProactiveAlert, in language: ChatLanguage = .arabic) -> [GroundingFact] {
        let d = abs(alert.daysRemaining)
        let document = GroundingFact(
            name: language == .arabic
                ? "العنوان (\(alert.serviceType.documentName))"
                : "the title (\(alert.serviceType.documentName(in: language)))",
            accepted: alert.serviceType.documentWordings(in: language))
        switch language {
        case .arabic:
            var days = [
                "\(d) يوم", "\(d) يوما", "\(d) أيام", "\(d)يوم", "\(d) ايام", arabicDays(d),
                arabicDays(d, genitive: true),
            ]
            if d == 0 { days += ["اليوم"] }
            return [
                document,
                GroundingFact(name: alert.isOverdue ? "منتهية منذ (\(d))" : "الأيام المتبقية (\(d))", accepted: days),
            ]
        case .english:
            var days = ["\(d) day", "\(d)-day"]
            if d == 0 { days += ["today"] }
            return [
                document,
                GroundingFact(
                    name: alert.isOverdue ? "expired days ago (\(d))" : "the days remaining (\(d))", accepted: days),
            ]
        }
    }

    /// Numbers the text may contain: the days, the fee, the expiry date's parts and the document number's digits.
    public static func allowedNumbers(for alert: ProactiveAlert) -> [String] {
        let e = alert.document.expiryDate
        var numbers = ["\(abs(alert.daysRemaining))", "\(e.year)", "\(e.month)", "\(e.day)"]
        if let fee = alert.document.renewalFeeSAR { numbers.append("\(fee)") }
        if let n = alert.document.number { numbers += digitGroups(n) }
        return numbers
    }

    /// The whole grounded request for `alert`, in `language`.
    public static func grounded(
        for alert: ProactiveAlert, userText: String, in language: ChatLanguage = .arabic
    ) -> GroundedReply {
        GroundedReply(
            messages: messages(for: alert, userText: userText, in: language), facts: facts(for: alert, in: language),
            allowedNumbers: allowedNumbers(for: alert), language: language,
            fallback: fallback(for: alert, in: language), deepLink: alert.deepLink(in: language))
    }

    static func digitGroups(_ text: String) -> [String] {
        var groups: [String] = []
        var current = ""
        for c in text {
            if c.isASCII && c.isNumber {
                current.append(c)
            } else if !current.isEmpty {
                groups.append(current)
                current = ""
            }
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }
}
