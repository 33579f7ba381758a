//! Literals with inner spaces: IBANs, phone numbers, names, money, dates written out.

use decima_core::Role;
use serde_json::json;

use super::super::FactKind;
use super::super::generator::Gen;

use super::grouped;

/// U+202F NARROW NO-BREAK SPACE, the French thousands separator.
const NNBSP: char = '\u{202f}';
/// U+00A0 NO-BREAK SPACE.
const NBSP: char = '\u{a0}';

/// An IBAN with a valid check: country code, check digits, the BBAN, in groups of four.
fn iban(rng: &mut fastrand::Rng) -> String {
    let (country, bban) = match rng.u8(0..3) {
        0 => (
            "DE",
            (0..18)
                .map(|_| char::from(b'0' + rng.u8(0..10)))
                .collect::<String>(),
        ),
        1 => {
            let bank = ["ABNA", "INGB", "RABO"][rng.usize(0..3)];
            let acct: String = (0..10).map(|_| char::from(b'0' + rng.u8(0..10))).collect();
            ("NL", format!("{bank}{acct}"))
        }
        _ => (
            "FR",
            (0..23)
                .map(|_| char::from(b'0' + rng.u8(0..10)))
                .collect::<String>(),
        ),
    };
    let rearranged = format!("{bban}{country}00");
    let mut rem = 0u32;
    for c in rearranged.chars() {
        let v = c.to_digit(36).unwrap_or(0);
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    let compact = format!("{country}{:02}{bban}", 98 - rem);
    let mut out = String::new();
    for (i, c) in compact.chars().enumerate() {
        if i > 0 && i % 4 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn digits(rng: &mut fastrand::Rng, n: usize) -> String {
    (0..n).map(|_| char::from(b'0' + rng.u8(0..10))).collect()
}

impl Gen {
    pub(in crate::fact_sessions) fn spaced_literal(&mut self) -> bool {
        let Some(i) = self.spaced.pop() else {
            return false;
        };
        let zh = self.zh;
        let r = &mut self.rng;
        let months = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ];
        let phone = |r: &mut fastrand::Rng, zh: bool| -> String {
            if zh {
                format!(
                    "+86 {} {} {}",
                    ["10", "21", "755"][r.usize(0..3)],
                    digits(r, 4),
                    digits(r, 4)
                )
            } else {
                match r.u8(0..3) {
                    0 => format!("+49 30 {} {}", digits(r, 6), digits(r, 2)),
                    1 => format!("+44 20 {} {}", digits(r, 4), digits(r, 4)),
                    _ => format!(
                        "+33 1 {} {} {} {}",
                        digits(r, 2),
                        digits(r, 2),
                        digits(r, 2),
                        digits(r, 2)
                    ),
                }
            }
        };
        // (who says it, the message or tool output with `{v}`, subject en, subject zh, value)
        let (by, template, en, zh_subject, v): (Role, &str, &[&str], &[&str], String) = match i {
            0 => {
                let t = if zh {
                    [
                        "合作伙伴的打款从下个月起走这个 IBAN：{v}，旧账户已经销户了。",
                        "对账时收款账户请用 {v}，之前那个上周五关了。",
                    ][r.usize(0..2)]
                } else {
                    [
                        "Payouts for the Northwind reseller go to {v} from next month — the old Commerzbank account is closed.",
                        "new IBAN for the partner payouts: {v} (finance sent it this morning)",
                        "Please use the payout account {v} in the reconciliation; the previous one was closed on Friday.",
                    ][r.usize(0..3)]
                };
                (
                    Role::User,
                    t,
                    &["IBAN", "payout account", "payouts", "bank account"][..],
                    &["IBAN", "收款账户", "打款"][..],
                    iban(r),
                )
            }
            1 => {
                let t = if zh {
                    "夜里导出任务挂了的话，数据平台的值班电话是 {v}。"
                } else {
                    [
                        "If the export job dies overnight, the on-call phone for data platform is {v}.",
                        "on-call this week is Kai: {v} (don't call before 7, he bites)",
                    ][r.usize(0..2)]
                };
                (
                    Role::User,
                    t,
                    &["on-call", "phone"][..],
                    &["值班电话", "值班"][..],
                    phone(r, zh),
                )
            }
            2 => {
                let (t, names): (&str, &[&str]) = if zh {
                    (
                        "能不能把“{v}”这个分群单独拎出来？销售觉得问题就出在这里。",
                        &[
                            "华东区 – 重点客户",
                            "Q3 North – Enterprise",
                            "华南 中小企业（续约）",
                        ],
                    )
                } else {
                    (
                        [
                            "Can you isolate the segment called “{v}”? Sales thinks that's where the leak is.",
                            "segment name is {v} exactly, with the dash, it's how it's spelled in Salesforce",
                        ][r.usize(0..2)],
                        &[
                            "Q3 North – Enterprise",
                            "EMEA Mid-Market (renewals)",
                            "SMB – Self Serve",
                            "Strategic Accounts DACH",
                        ],
                    )
                };
                (
                    Role::User,
                    t,
                    &["segment"][..],
                    &["分群", "客群", "segment"][..],
                    names[r.usize(0..names.len())].to_string(),
                )
            }
            3 => {
                let t = if zh {
                    "口径表以团队盘上的“{v}”为准，别用 CSV 导出那份。"
                } else {
                    [
                        "The source of truth is \"{v}\" on the team drive, not the CSV export.",
                        "fyi the spreadsheet everyone actually uses is {v} — ignore the v2 one",
                    ][r.usize(0..2)]
                };
                let files = [
                    "Sales Pipeline (final).xlsx",
                    "Churn Deck v3 FINAL (2).pptx",
                    "Retention model notes 2026.xlsx",
                    "Q3 board pack – draft.xlsx",
                ];
                (
                    Role::User,
                    t,
                    &["source of truth", "spreadsheet"][..],
                    &["口径表", "为准"][..],
                    files[r.usize(0..files.len())].to_string(),
                )
            }
            4 => {
                let t = if zh {
                    "Claire 给的核销金额是 {v}（法式写法，别介意）。"
                } else {
                    "Claire's number for the write-off is {v} (she writes them the French way, sorry)."
                };
                let v = format!(
                    "{},{:02}{NBSP}€",
                    grouped(r.u64(100_000..9_000_000), NNBSP),
                    r.u32(0..100)
                );
                (
                    Role::User,
                    t,
                    &["write-off", "write off", "written off"][..],
                    &["核销", "核销金额"][..],
                    v,
                )
            }
            5 => {
                let (m, d) = (r.usize(0..12), r.u32(1..29));
                let (t, v) = if zh {
                    (
                        "Globex 的合同 {v} 续约，之后的预测都只是推测。",
                        format!("2026 年 {} 月 {d} 日", m + 1),
                    )
                } else {
                    (
                        [
                            "the Globex contract renews on {v}, so anything after that is speculative",
                            "Globex renewal date: {v}. Legal confirmed.",
                        ][r.usize(0..2)],
                        format!("{d} {} 2026", months[m]),
                    )
                };
                (Role::User, t, &["renews", "renewal"][..], &["续约"][..], v)
            }
            6 => {
                let t = if zh {
                    "账单地址改成 {v} 了，新发票都寄这里。"
                } else {
                    "invoices go to the new billing address from now on: {v}"
                };
                let v = if r.bool() {
                    format!("Friedrichstraße {}, 10117 Berlin", r.u32(1..200))
                } else {
                    format!("Keizersgracht {}, 1015 CJ Amsterdam", r.u32(1..600))
                };
                (
                    Role::User,
                    t,
                    &["billing address", "address"][..],
                    &["账单地址", "地址"][..],
                    v,
                )
            }
            7 => {
                let t = if zh {
                    "终版材料放到 {v}（对，路径里有空格，别问）"
                } else {
                    "final deck goes into {v} (yes, with the spaces, don't ask)"
                };
                let v = [
                    "s3://finance-share/Board Packs/2026 Q3/",
                    "s3://finance-share/Exec Reviews/FY26 H2/",
                    "s3://finance-share/Board Packs/Q3 2026 (final)/",
                ][r.usize(0..3)]
                .to_string();
                (
                    Role::User,
                    t,
                    &["final deck", "deck"][..],
                    &["终版材料", "材料"][..],
                    v,
                )
            }
            8 => {
                let t = if zh {
                    "发票抬头是法律主体 {v}，不是品牌名，所以我按这个匹配。"
                } else {
                    "The invoices are issued to the legal entity {v}, not the brand name, so I'm matching on that."
                };
                let v = [
                    "Globex Trading GmbH & Co. KG",
                    "Northwind Data Services B.V.",
                    "Huaxin Cloud (Shanghai) Co., Ltd.",
                ][r.usize(0..3)]
                .to_string();
                (
                    Role::Assistant,
                    t,
                    &["legal entity", "legal name"][..],
                    &["法律主体", "发票抬头"][..],
                    v,
                )
            }
            9 => {
                let v = format!(
                    "{},{:02}{NBSP}€",
                    grouped(r.u64(1_000_000..9_000_000), NNBSP),
                    r.u32(0..100)
                );
                let t = "Rapport de facturation — T3 2026\nNombre de factures : {n}\nMontant total : {v}\nDevise : EUR\n";
                (
                    Role::Tool,
                    t,
                    &["Montant total", "total amount", "billing total"][..],
                    &["Montant total", "总金额", "开票总额"][..],
                    v,
                )
            }
            _ => {
                let t = if zh {
                    "合同里找到了供应商的客户经理：Dana Whitfield，电话 {v}。要我起草邮件吗？"
                } else {
                    "I found the vendor contact in the contract PDF: Dana Whitfield, {v}. Want me to draft an email?"
                };
                (
                    Role::Assistant,
                    t,
                    &["vendor contact", "Dana"][..],
                    &["客户经理", "供应商", "Dana"][..],
                    phone(r, false),
                )
            }
        };
        let invoices = grouped(self.rng.u64(10_000..40_000), NNBSP);
        let text = template.replace("{v}", &v).replace("{n}", &invoices);
        let pos = match by {
            Role::Tool => {
                let lead = self.lead();
                self.tool("shell", json!({"command": "python reports/facturation.py --trimestre 3 --locale fr_FR"}), text, lead)
            }
            Role::Assistant => {
                let pos = self.pos();
                let intro = self.prose(1);
                let text = format!("{intro}\n\n{text}");
                self.say(Role::Assistant, text);
                pos
            }
            _ => {
                let text = self.wrap_user(text);
                let pos = self.pos();
                self.say(Role::User, text);
                pos
            }
        };
        self.fact_lang(FactKind::SpacedLiteral, en, zh_subject, &v, by, pos);
        if by == Role::User {
            let ack = self.ack();
            self.say(Role::Assistant, ack);
        } else {
            self.after_result();
        }
        true
    }
}
