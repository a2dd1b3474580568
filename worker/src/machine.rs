//! This machine as the worker reports it at registration
//! ([`xq_proto::Machine`]): the CPU's model and instruction-set flags from
//! `/proc/cpuinfo` (x86 `flags`, ARM `Features`), memory from
//! `/proc/meminfo`, the logical CPUs the process may use from
//! [`std::thread::available_parallelism`]. Without `/proc` (another system,
//! or a sandbox that hides it) the flags come from the standard library's
//! run-time detection (`is_x86_feature_detected!`,
//! `is_aarch64_feature_detected!`) and the model and memory stay unknown.
//!
//! The text parsers are pure functions, tested on real machines' files.
//! `xq-worker work --cpu-flags` replaces the detected flags (see
//! `worker/COMMANDS.md`).

use std::collections::HashSet;

use xq_proto::machine::MAX_CPU_MODEL_BYTES;
use xq_proto::{Flag, Flags, Machine};

/// The kernel's flag names each normalised flag stands for (all of them
/// needed), x86 and ARM alike: the names never collide.
const KERNEL_NAMES: &[(Flag, &[&str])] = &[
    (Flag::Sse3, &["pni"]),
    (Flag::Ssse3, &["ssse3"]),
    (Flag::Sse41, &["sse4_1"]),
    (Flag::Sse42, &["sse4_2"]),
    (Flag::Popcnt, &["popcnt"]),
    (Flag::Avx, &["avx"]),
    (Flag::Avx2, &["avx2"]),
    (Flag::Bmi1, &["bmi1"]),
    (Flag::Bmi2, &["bmi2"]),
    (Flag::Fma, &["fma"]),
    (Flag::Avx512, &["avx512f", "avx512bw"]),
    (Flag::Vnni, &["avx512_vnni"]),
    (Flag::AvxVnni, &["avx_vnni"]),
    (
        Flag::Avx512Icl,
        &[
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512dq",
            "avx512cd",
            "avx512ifma",
            "avx512vbmi",
            "avx512_vbmi2",
            "avx512_vnni",
            "avx512_bitalg",
            "avx512_vpopcntdq",
            "gfni",
            "vaes",
            "vpclmulqdq",
        ],
    ),
    (Flag::Neon, &["asimd"]),
    (Flag::Dotprod, &["asimddp"]),
];

/// The normalised flags of a list of the kernel's flag names.
pub fn normalise(kernel_flags: &str) -> Flags {
    let have: HashSet<&str> = kernel_flags.split_whitespace().collect();
    KERNEL_NAMES
        .iter()
        .filter(|(_, needs)| needs.iter().all(|n| have.contains(n)))
        .map(|(flag, _)| *flag)
        .collect()
}

/// What `/proc/cpuinfo` says of the CPU (its first processor's entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuInfo {
    /// The model name, tidied ([`tidy_model`]); empty when the file names
    /// none and no known ARM core is described.
    pub model: String,
    pub flags: Flags,
}

/// Why `/proc/cpuinfo`'s text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuInfoError {
    #[error("no `flags` (x86) or `Features` (ARM) line in /proc/cpuinfo")]
    NoFlags,
}

/// Why `/proc/meminfo`'s text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemInfoError {
    #[error("no `MemTotal` line in /proc/meminfo")]
    NoTotal,
    #[error("MemTotal {0} is not a number of kB")]
    BadTotal(String),
}

/// The value of the first `key : value` line of `text` whose key is `key`.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// Reads `/proc/cpuinfo`'s text: the model (`model name`; on ARM, which
/// usually has none, a known core named from `CPU implementer` and `CPU
/// part`) and the flags (`flags` on x86, `Features` on ARM), normalised.
pub fn parse_cpuinfo(text: &str) -> Result<CpuInfo, CpuInfoError> {
    let kernel_flags = field(text, "flags")
        .or_else(|| field(text, "Features"))
        .ok_or(CpuInfoError::NoFlags)?;
    let model = match field(text, "model name") {
        Some(name) => tidy_model(name),
        None => arm_core(field(text, "CPU implementer"), field(text, "CPU part"))
            .unwrap_or_default()
            .to_owned(),
    };
    Ok(CpuInfo {
        model,
        flags: normalise(kernel_flags),
    })
}

/// Some ARM Ltd cores by part number (`CPU implementer : 0x41`), as the
/// kernel's `/proc/cpuinfo` on AArch64 gives no model name.
fn arm_core(implementer: Option<&str>, part: Option<&str>) -> Option<&'static str> {
    if implementer? != "0x41" {
        return None;
    }
    Some(match part? {
        "0xd03" => "ARM Cortex-A53",
        "0xd05" => "ARM Cortex-A55",
        "0xd07" => "ARM Cortex-A57",
        "0xd08" => "ARM Cortex-A72",
        "0xd0b" => "ARM Cortex-A76",
        "0xd0c" => "ARM Neoverse-N1",
        "0xd40" => "ARM Neoverse-V1",
        "0xd41" => "ARM Cortex-A78",
        "0xd49" => "ARM Neoverse-N2",
        "0xd4f" => "ARM Neoverse-V2",
        _ => return None,
    })
}

/// A model name as reported: runs of spaces made one, control characters
/// dropped, cut to [`MAX_CPU_MODEL_BYTES`] bytes at a character boundary.
pub fn tidy_model(name: &str) -> String {
    let printable: String = name
        .chars()
        .filter(|c| c.is_whitespace() || !c.is_control())
        .collect();
    let mut out = printable.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.len() > MAX_CPU_MODEL_BYTES {
        let mut end = MAX_CPU_MODEL_BYTES;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.truncate(out.trim_end().len());
    }
    out
}

/// Reads `/proc/meminfo`'s text: `MemTotal` in MiB.
pub fn parse_meminfo(text: &str) -> Result<u64, MemInfoError> {
    let total = field(text, "MemTotal").ok_or(MemInfoError::NoTotal)?;
    let kb = total
        .strip_suffix("kB")
        .map(str::trim)
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| MemInfoError::BadTotal(xq_proto::quote(total)))?;
    Ok(kb / 1024)
}

/// The flags the standard library detects at run time.
#[cfg(target_arch = "x86_64")]
pub fn runtime_flags() -> Flags {
    use std::arch::is_x86_feature_detected as has;
    let icl = has!("avx512f")
        && has!("avx512bw")
        && has!("avx512vl")
        && has!("avx512dq")
        && has!("avx512cd")
        && has!("avx512ifma")
        && has!("avx512vbmi")
        && has!("avx512vbmi2")
        && has!("avx512vnni")
        && has!("avx512bitalg")
        && has!("avx512vpopcntdq")
        && has!("gfni")
        && has!("vaes")
        && has!("vpclmulqdq");
    [
        (Flag::Sse3, has!("sse3")),
        (Flag::Ssse3, has!("ssse3")),
        (Flag::Sse41, has!("sse4.1")),
        (Flag::Sse42, has!("sse4.2")),
        (Flag::Popcnt, has!("popcnt")),
        (Flag::Avx, has!("avx")),
        (Flag::Avx2, has!("avx2")),
        (Flag::Bmi1, has!("bmi1")),
        (Flag::Bmi2, has!("bmi2")),
        (Flag::Fma, has!("fma")),
        (Flag::Avx512, has!("avx512f") && has!("avx512bw")),
        (Flag::Vnni, has!("avx512vnni")),
        (Flag::AvxVnni, has!("avxvnni")),
        (Flag::Avx512Icl, icl),
    ]
    .into_iter()
    .filter(|f| f.1)
    .map(|f| f.0)
    .collect()
}

/// The flags the standard library detects at run time.
#[cfg(target_arch = "aarch64")]
pub fn runtime_flags() -> Flags {
    use std::arch::is_aarch64_feature_detected as has;
    [(Flag::Neon, has!("neon")), (Flag::Dotprod, has!("dotprod"))]
        .into_iter()
        .filter(|f| f.1)
        .map(|f| f.0)
        .collect()
}

/// The flags the standard library detects at run time: none it knows of
/// on this architecture.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn runtime_flags() -> Flags {
    Flags::EMPTY
}

/// This machine: `/proc` where it can be read, else the run-time detection
/// (a warning says what was not read).
pub fn detect() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .map_err(|e| e.to_string())
        .and_then(|text| parse_cpuinfo(&text).map_err(|e| e.to_string()));
    let (cpu_model, flags) = match cpu {
        Ok(info) => (info.model, info.flags),
        Err(e) => {
            tracing::debug!(error = %e, "CPU flags from run-time detection");
            (String::new(), runtime_flags())
        }
    };
    let memory_mib = std::fs::read_to_string("/proc/meminfo")
        .map_err(|e| e.to_string())
        .and_then(|text| parse_meminfo(&text).map_err(|e| e.to_string()))
        .unwrap_or_else(|e| {
            tracing::debug!(error = %e, "memory unknown");
            0
        });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    Machine {
        cpu_model,
        isa: std::env::consts::ARCH.to_owned(),
        flags,
        cores,
        memory_mib,
    }
}

#[cfg(test)]
mod tests {
    use xq_proto::{Arch, X86Level};

    use super::*;

    /// A Sapphire Rapids server (AVX-512 with VNNI and Ice Lake's set,
    /// AVX-VNNI), as a cloud VM reports it.
    const SAPPHIRE_RAPIDS: &str = "processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Processor
stepping\t: 8
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch cpuid_fault fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 arat avx512vbmi umip avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid cldemote movdiri movdir64b fsrm serialize tsxldtrk amx_bf16 avx512_fp16 amx_tile amx_int8 arch_capabilities
bugs\t\t: spectre_v1 spectre_v2 spec_store_bypass swapgs
bogomips\t: 4200.00

processor\t: 1
vendor_id\t: GenuineIntel
flags\t\t: fpu vme de pse
";

    /// A Core i7 920 (Nehalem, 2008): SSE4.2 and POPCNT, no AVX.
    const NEHALEM: &str = "processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 26
model name\t: Intel(R) Core(TM) i7 CPU         920  @ 2.67GHz
stepping\t: 4
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx rdtscp lm constant_tsc up arch_perfmon pebs bts rep_good xtopology nonstop_tsc aperfmperf pni dtes64 monitor ds_cpl vmx est tm2 ssse3 cx16 xtpr pdcm sse4_1 sse4_2 popcnt lahf_lm ida dts tpr_shadow vnmi flexpriority ept vpid
bogomips\t: 5333.50
";

    /// An AWS Graviton2 (Neoverse N1): Advanced SIMD with dot product, and
    /// no model name.
    const GRAVITON2: &str = "processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1
";

    /// A Raspberry Pi 4 (Cortex-A72): Advanced SIMD without dot product.
    const RASPBERRY_PI_4: &str = "processor\t: 0
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm crc32 cpuid
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x0
CPU part\t: 0xd08
CPU revision\t: 3
";

    fn machine(info: &CpuInfo, isa: &str) -> Machine {
        Machine {
            cpu_model: info.model.clone(),
            isa: isa.to_owned(),
            flags: info.flags,
            cores: 1,
            memory_mib: 0,
        }
    }

    #[test]
    fn a_sapphire_rapids_server_has_every_x86_flag_and_runs_avx512icl() {
        let info = parse_cpuinfo(SAPPHIRE_RAPIDS).unwrap();
        assert_eq!(info.model, "Intel(R) Xeon(R) Processor");
        assert_eq!(
            info.flags.to_string(),
            "sse3,ssse3,sse41,sse42,popcnt,avx,avx2,bmi1,bmi2,fma,avx512,vnni,avxvnni,avx512icl"
        );
        let m = machine(&info, "x86_64");
        assert_eq!(m.x86_level(), Some(X86Level::V4));
        assert_eq!(m.best_arch(), Some(Arch::X86_64Avx512Icl));
        assert!(m.runs(Arch::X86_64AvxVnni));
        assert!(!m.runs(Arch::Armv8));
    }

    #[test]
    fn a_nehalem_has_sse42_and_popcnt_only() {
        let info = parse_cpuinfo(NEHALEM).unwrap();
        assert_eq!(info.model, "Intel(R) Core(TM) i7 CPU 920 @ 2.67GHz");
        assert_eq!(info.flags.to_string(), "sse3,ssse3,sse41,sse42,popcnt");
        let m = machine(&info, "x86_64");
        assert_eq!(m.x86_level(), Some(X86Level::V2));
        assert_eq!(m.best_arch(), Some(Arch::X86_64Sse41Popcnt));
        assert!(!m.runs(Arch::X86_64Avx2));
    }

    #[test]
    fn arm_cores_read_their_features_and_are_named_by_part() {
        let n1 = parse_cpuinfo(GRAVITON2).unwrap();
        assert_eq!(n1.model, "ARM Neoverse-N1");
        assert_eq!(n1.flags.to_string(), "neon,dotprod");
        let m = machine(&n1, "aarch64");
        assert_eq!(m.best_arch(), Some(Arch::Armv8Dotprod));
        assert_eq!(m.x86_level(), None);
        let a72 = parse_cpuinfo(RASPBERRY_PI_4).unwrap();
        assert_eq!(a72.model, "ARM Cortex-A72");
        assert_eq!(machine(&a72, "aarch64").best_arch(), Some(Arch::Armv8));
        let unknown = RASPBERRY_PI_4.replace("0xd08", "0xfff");
        assert_eq!(parse_cpuinfo(&unknown).unwrap().model, "");
    }

    #[test]
    fn a_composite_flag_needs_all_its_parts() {
        assert_eq!(normalise("avx512f avx512dq").to_string(), "");
        assert_eq!(normalise("avx512bw avx512f").to_string(), "avx512");
        assert_eq!(normalise("avx_vnni").to_string(), "avxvnni");
    }

    #[test]
    fn text_without_flags_is_an_error() {
        assert_eq!(
            parse_cpuinfo("processor : 0\nmodel name : x\n"),
            Err(CpuInfoError::NoFlags)
        );
        assert_eq!(parse_cpuinfo(""), Err(CpuInfoError::NoFlags));
    }

    #[test]
    fn memory_is_mem_total_in_mib() {
        let text = "MemTotal:       24683584 kB\nMemFree:        23787832 kB\n";
        assert_eq!(parse_meminfo(text), Ok(24_105));
        assert_eq!(parse_meminfo("MemFree: 1 kB\n"), Err(MemInfoError::NoTotal));
        assert!(matches!(
            parse_meminfo("MemTotal: lots\n"),
            Err(MemInfoError::BadTotal(q)) if q == "\"lots\""
        ));
    }

    #[test]
    fn model_names_are_tidied_and_cut() {
        assert_eq!(tidy_model("  a \t b\u{7}c  "), "a bc");
        let long = tidy_model(&"é".repeat(100));
        assert!(long.len() <= MAX_CPU_MODEL_BYTES, "{}", long.len());
        assert!(long.starts_with("éé"));
        let words = tidy_model(&"word ".repeat(40));
        assert!(words.len() <= MAX_CPU_MODEL_BYTES && !words.ends_with(' '));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn proc_and_run_time_detection_agree_on_this_machine() {
        let proc = parse_cpuinfo(&std::fs::read_to_string("/proc/cpuinfo").unwrap()).unwrap();
        assert_eq!(proc.flags, runtime_flags());
    }

    #[test]
    fn this_machine_is_detected_within_the_wire_rules() {
        let m = detect();
        m.validate().unwrap();
        assert!(m.cores >= 1);
        assert_eq!(m.isa, std::env::consts::ARCH);
    }
}
