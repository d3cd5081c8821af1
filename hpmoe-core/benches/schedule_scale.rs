//! Scheduling cost at scale: MoE-shaped taskflows of exactly 10^3, 10^4, 10^5 and 10^6 tile
//! instances (all ranks), and of `limits::MAX_INSTANCES` (2^23 ≈ 8.4·10^6, the most a taskflow
//! may have), through the whole pipeline as hpmoe plans every taskflow ([`hpmoe_core::plan`]:
//! the cost model, checks, expansion, list scheduling, deadlock proof, synchronisation, hardware
//! flags, table), with the time of each stage and the table's size.
//!
//! `cargo bench -p hpmoe-core --bench schedule_scale` (add `-- --quick` to stop at 10^5, or
//! `-- --no-limit` to stop at 10^6; `-- --runs N` plans each taskflow N times and shows each
//! column's least time over the runs, which on a machine other work loads is the steadier
//! figure).
//!
//! Each taskflow is the DeepSeek-V3-tiled MoE layer ([`MoeShape::deepseek_v3`] with fewer
//! experts and tokens) with the most instances not above the target whose rank count divides
//! the target, plus, when that falls short, a last family `pad` of `zero` tiles on a scratch
//! tensor nothing reads, with exactly as many instances per rank as make the total the target.
//! The bench asserts the instance count.
//!
//! Times are wall-clock on whatever machine runs it; compare rows of one run, not runs on
//! different machines. The "n log n" column is time / (n · log2 n) in ns, normalised to
//! the first row: close to 1 all the way down means growth close to n log n. `cpu_ms` is the
//! CPU time of the plan (user + system, every thread, to 10 ms; Linux only), the steadier
//! figure on a loaded machine. From 2^19 instances on, when an improvement round runs, the
//! stages after scheduling run on a second thread alongside it ([`hpmoe_core::plan`] overlaps
//! them), so `list` then includes waiting for them and the stage columns add up to more than
//! `total_ms` (`cost` shows 0); at 10^6 no round runs (see below). From 2^16 instances on,
//! the counters of every kept dependency are built while the flags are planned, so `sync` and
//! `flg+tbl` overlap too (and `cost` shows 0 again). `table` and `flags` fingerprint the plan
//! (the table's checksum, an FNV-1a of the flag plan): two builds that plan alike print the same.
//!
//! Measured on the shared 2-core development machine under a load average of 13.7–15.8 (other
//! helpers building; the kernel's autogroup scheduling gives this process one share however
//! many threads it runs, so wall times there are 5–10× the CPU times and say little), previous
//! main and this version one after the other, twice each, `--no-limit --runs 2`, 10^6 row
//! (fingerprints `5dda2e5b f7372655` in both, and equal at 10^3 … 10^5):
//!
//! | 10^6 instances      |  previous main |       now |
//! |---------------------|---------------:|----------:|
//! | total, CPU (ms)     |      2720–2770 | 1850–1880 |
//! | total, wall (ms)    |    23357–25980 | 18361–20293 (load 14–16: not comparable to an idle run) |
//!
//! Again later, when the load had fallen to 4.7–5.6 (a clippy build beside it), one run of
//! each after the other, twice: total CPU 2480–2610 ms before, 1710–1720 ms now; wall
//! 3188–5952 ms before, 2307–2730 ms now (stages now, wall: expand 596–853, list 543–565,
//! proof 34–43, sync 755–778, flags + table 253–271 ms).
//!
//! What changed: the improvement round is skipped once the first pass is within 1/64 of a lower
//! bound that now includes the resources the passes book (each rank's lanes and server tier);
//! at 10^6 the first pass is within 0.8% of the tier's bound (74.59 ms planned, 73.99 ms of
//! bytes across servers), so the round, which never won there, no longer runs: one pass instead
//! of three, and no second thread. The sync reduction reuses the deadlock proof's core chains
//! and order, and the table's checksum no longer serialises the table. By `perf` before the
//! change (the whole `--no-limit` run), the 10^6 plan's CPU went to list scheduling ~1.2 s
//! (three passes of ~0.4 s), sync reduction ~0.45–0.7 s, expansion and checks ~0.55 s, flags and
//! table ~0.25 s; now list scheduling is one pass. 10^6 instances in under 1 s is not reached
//! in CPU time (about 1.85 s under this load; expansion, one pass, the reduction and the table
//! are each a few hundred ms, all sequential), nor measured in wall time on an idle machine.
//!
//! Since then (same plans: fingerprints equal at every size, 2^23 `b05e2c6d 18c4b0ec`
//! included): expansion links the tensors on two threads and sorts its hazards beside building
//! the DAG; the structural checks run once per plan; flag planning takes the kept dependencies
//! the sync plan built instead of rebuilding them twice; the sync reduction reads each
//! predecessor's core, position and visiting index from one record and raises positions in place
//! when a merge brings no new core. Measured side by side with the previous main on the shared
//! machine under a load average of 9–12 (five helpers building; wall times there are 10–30× the
//! CPU times and say nothing), `--no-limit --runs 2`, 10^6 row, CPU of the plan: 2490, 2650 and
//! 2050 ms before, 2130, 2110 and 2830 ms after (three pairs; the spread is the load's). Not
//! measured on an idle machine, so whether 10^6 instances now plan in under 1 s of wall time is
//! not known; the two threads save wall time only where a second core is free.
//!
//! Since then (same plans): the sync reduction keeps the slot of each node's clock in the
//! record it reads per predecessor, and each clock's length in its slot, so reading a
//! producer's clock costs one cache miss instead of three (at 10^6, 2.8 million of the 3.3
//! million edges are kept and each merges its producer's clock, of about 250 000 alive at
//! once). Side by side with the previous main, alternating, load 5, `--no-limit --runs 2`,
//! 10^6 row: sync 747–782 ms against 840–903, CPU of the plan 1560–1630 ms against
//! 1630–1730, wall 2.35–2.51 s against 2.47–2.64 s. A merge that walks outwards from the own
//! core's fact (at most `CLOCK_CAP` steps, never reading what the cap drops) measured slower
//! (sync 0.96–1.49 s against 0.57–0.91 s) and was not kept. By `perf record` (CPU-clock
//! samples: this machine's VM exposes no hardware counters, so `instructions:u` cannot be
//! read) of a `--no-limit` run, the time goes to the list scheduler's event loop (~17% of the
//! samples with its heaps and bound), the reduction (~16%, and ~3% in hash-set inserts, most
//! likely its set of signalled cores: without call graphs this is not certain), expansion's
//! overlap search (~17%), and ~9% to the kernel faulting in and zeroing fresh pages; 10^6
//! instances in under 1 s is not reached.
//!
//! Since then (same plans: fingerprints equal at 10^3 … 10^6, and all 121 files of the main job's
//! `--out` folder byte-identical to main's at `--tokens 2048`): the sync reduction runs on two
//! threads from 2^18 nodes, each visiting the nodes of one half of the cores in the same global
//! order (a clock of the other half is read once its owner has published the visit); its kept
//! rows come out sorted, without `Csr::from_pairs` over 2.8 million pairs; list scheduling
//! computes its lower bound beside the first pass; and the interval index answers a query on
//! tiled intervals (ends sorted like starts) by a binary search and a scan instead of a tree
//! walk. Side by side with the previous main, alternating, `--no-limit --runs 2`, 10^6 row,
//! three pairs when the load had fallen to 2.0 (ms; wall, then CPU of the plan):
//!
//! | 10^6 instances  | previous main     | now               |
//! |-----------------|------------------:|------------------:|
//! | total, wall     | 1434–1685         | 1152–1370         |
//! | total, CPU      | 1610–1910         | 1580–1830         |
//! | expand          | 311–342           | 230–362           |
//! | list            | 382–428           | 336–394           |
//! | proof           | 37–53             | 38–45             |
//! | sync            | 513–635           | 331–362           |
//! | flags + table   | 168–185           | 174–188           |
//!
//! The two reduction threads cost about 0.3 s of CPU each where the one took 0.55 s, so the
//! gain is wall time on a free second core: under a load of 4.4 (three pairs again) the wall
//! and CPU totals were the same as before (2.5–2.9 s wall, 1.75–1.9 s CPU) and the sync stage
//! slower (1.0–1.08 s against 0.86–0.88 s: a worker waits while the other is descheduled);
//! at a load of 2.8 (two pairs) the result was mixed, wall 1.69–2.18 s against 1.81–1.89 s,
//! and the plan's CPU higher, 2.17–2.21 s against 1.79–1.89 s (the waiting worker spins, then
//! yields, while the other waits for a core; it now parks instead, see below).
//! 10^6 instances in under 1 s is still not reached: about 1.15 s of wall time on a nearly
//! free machine, of which list scheduling (one sequential pass, ~0.34 s), expansion (~0.23 s
//! on two threads), the reduction (~0.33 s) and flags + table (~0.17 s, sequential) are most.

//!
//! Since then (same plans: fingerprints equal at 10^3 … 10^6): the counters are numbered in
//! one place for both plans a taskflow gets (flag planning no longer rebuilds them), the
//! reduction counts the cross-core edges as it walks (no second pass over the 3.3 million
//! edges), the plan of every kept dependency is built on a second thread while the flags are
//! planned, a waiting reduction worker parks instead of yielding, and the expansion reuses its
//! per-rank access buffers from tensor to tensor (page faults of a `--no-limit` run 120–134
//! thousand before, 111–113 thousand after). Measured side by side with the previous version,
//! alternating, three pairs, `--no-limit --runs 2`, but only under a load average of 8.5–11.5
//! (other helpers building): CPU of the 10^6 plan 1770–1810 ms before, 1740–1830 ms after, wall
//! times 4.8–6.9 s both, which at that load say nothing. The changes save wall time only with
//! a free second core and a little CPU; neither is visible in this noise, and 10^6 instances in
//! under 1 s is still not reached (CPU of the plan ~1.6–1.8 s; by `perf`, the reduction's
//! cache misses on its per-node records and clocks, the list scheduler's event loop, the
//! expansion's linking, and the kernel faulting in fresh pages, ~14% of the samples, are most).
//!
//! Since then (same plans: fingerprints equal at 10^3 … 10^6): expansion links a tensor every
//! rank accesses alike (its own copy, in regions that do not mention `RANK`: at 10^6 the
//! tokens, the weights and the expert computation's buffers, 2.2 of the 2.55 million accesses)
//! for rank 0 alone and copies the edges and hazards to the other 63 ranks, shifted by their
//! node ids; only the tensors that puts write are linked rank by rank. Side by side with the
//! previous main, alternating, three pairs, `--no-limit --runs 2`, 10^6 row, under a load
//! average of 11.5–12 (other helpers building; wall times say little there):
//!
//! | 10^6 instances   | previous main | now       |
//! |------------------|--------------:|----------:|
//! | expand (ms)      | 959–1012      | 246–268   |
//! | total, CPU (ms)  | 2080–2400     | 1790–2160 |
//! | total, wall (ms) | 4245–4913     | 3639–4320 |
//!
//! A shortcut in the reduction was tried and left out: skipping the read of a kept producer's
//! clock when none of its cores can survive the consumer's cap (judged by the clock's first
//! and last core, kept in the node's record). At 10^6 it skips only 319 000 of the 2.8 million
//! reads (most likely because the kept edges join AICs and AIVs of one rank, whose windows
//! overlap), while every record grows from 16 to 24 bytes; its time was not measured. 10^6
//! instances in under 1 s is still not reached: list scheduling, the reduction and flags +
//! table remain (on an idle machine about 0.42, 0.5 and 0.23 s by the previous figures).
//!
//! Since then (same plans: fingerprints equal at 10^3 … 10^6): the pipeline computes one
//! topological order of the instance DAG per plan (the ordering checks') and passes it to the
//! list scheduler's priorities and lower bound, which each computed their own (by `perf`,
//! `Dag::topo_order` and its callers were ~4% of a `--no-limit` run); and the sync reduction
//! keeps each node's count of unvisited successors in the record it reads per predecessor
//! (the atomic decrement in a separate array was 17% of the walk's samples: one more cache
//! miss per edge). Side by side, alternating previous main, the first change alone and both,
//! three rounds, `--no-limit --runs 3`, 10^6 row, under a load average of 6.8–7.4 (other
//! helpers building; wall times there say little):
//!
//! | 10^6 instances   | previous main | one order | both      |
//! |------------------|--------------:|----------:|----------:|
//! | total, CPU (ms)  | 1770–2080     | 1670–1910 | 1670–1780 |
//! | total, wall (ms) | 2523–3292     | 2544–2872 | 2510–2759 |
//! | sync (ms)        | 1268–1599     | 1237–1487 | 1275–1397 |
//!
//! By `perf` after both, the list scheduler's pass is ~22% of the samples (`sim::run` and its
//! heap), the reduction ~32% (the walk 13.5%, reading clocks 7.9%, merging them 6.5%, the
//! signalled set's inserts 2.2%), the kernel faulting in fresh pages ~7%. 10^6 instances in
//! under 1 s is still not reached (not measured on an idle machine this time). Again later
//! under a load of 4.7–6.0, three pairs, `--runs 3`: CPU 1590, 1730, 1710 ms before, 1470,
//! 1810, 1520 ms after (a gain of a few percent at most, inside this noise); under a load of
//! 2.8–3.2, five pairs: CPU 1490–1720 ms before, 1400–1670 after; wall 1107–2593 ms before,
//! 1056–1921 after, the best pair 1107 against 1056 ms (stages then, after: expand 88, list
//! 367, proof 49, sync 378, flags + table 174 ms). The main job's
//! `--out` folder at `--tokens 2048` (121 files) is byte-identical to the previous main's.
//!
//! Measured again on an idle machine, no change to the pipeline since (stop 29, two runs of
//! `--no-limit --runs 3` right after the release build, load 1.9 then 1.2; fingerprints as
//! above), 10^6 row: wall 1401 and 1296 ms, CPU 1820 and 1680 ms (stages, second run: expand
//! 99, list 369, proof 51, sync 538, flags + table 174 ms). The best pair of the earlier
//! sitting (1056 ms) is not reproduced on this day's machine, on which stop 27's main job, run
//! again, took 97 s of CPU against the 72 s measured at stop 27. 10^6 instances in under 1 s is not
//! reached: it would take some 300 ms off a pipeline whose largest stages (the reduction on two
//! threads, one list-scheduling pass, flags + table) are each under 0.6 s and sequential.
//!
//! Since then (stop 30; same plans: fingerprints equal at 10^3 … 10^6, and the main job's stdout
//! and `--out` folder identical but for timings): the first pass's priorities are computed
//! beside the rest of the list scheduler's setup (at 10^6, instrumented: 47–51 ms and 47–48 ms,
//! which had run one after the other), and the server tier finds a node's put through a
//! 4-byte slot per node instead of a 32-byte `Option` (a cache miss per started node in `perf`'s
//! profile of the pass). On this day's machine (a VM whose speed drifts through the day: the
//! previous main's 10^6 row took 1.30–1.78 s of wall time over twelve runs, the machine
//! otherwise idle), six alternating pairs, `--no-limit --runs 3`, gave 1.38–1.57 s before and
//! 1.15–1.66 s after: the saving (some 50 ms) is smaller than the noise, and 10^6 instances in
//! under 1 s is not reached. Stages on an instrumented run: list scheduling ~0.35–0.56 s (the pass itself
//! 0.46–0.56), the reduction 0.50–0.66 s (each of its two workers ~0.53 s, of which one waited
//! 59 ms for the other), flags and the kept dependencies without them 0.11–0.12 s beside the
//! counters' 0.03 s, the table 0.09–0.12 s (its validation 0.03–0.04 s).
//!
//! Since then (stop 31; same plans: fingerprints equal at 10^3 … 10^6, and the main job's
//! stdout and `--out` folder identical but for timings): the counters of the dependencies the
//! flags leave (the table's) are an edit of the full counter plan instead of a rebuild of the
//! kept dependencies without the flagged ones and a second numbering, which had made the flag
//! side of the section after the reduction four times as long as the counter side it ran
//! beside. At 10^6, instrumented, two runs each: that section 115–124 ms before; now 27 ms
//! (counters 23 ms beside the flag plan's 27) and then the edit, 31–32 ms. Side by side on the
//! bench's totals (three alternating pairs, `--no-limit --runs 2`) the 10^6 row took 1167–1388
//! ms before and 1139–1258 ms after, inside the noise; 10^6 instances in under 1 s is not
//! reached.
//!
//! Tried at stop 31 and not kept (each a build of main `d2aebdf`, 10^6 row, `--no-limit --runs
//! 2`, alternating with main on an otherwise idle machine; the stage times move 10–20% from run
//! to run, so only differences larger than that could be seen):
//! - **The reduction visiting the list scheduler's time order** (nodes sorted by planned start,
//!   then finish, then queue position: a topological order of the DAG and the core order, checked
//!   on the run) instead of the proof's: the same kept edges (fingerprints equal), so the cap
//!   does not depend on which topological order is walked here; sync 531–606 ms against 561–638.
//!   Worth knowing for a reduction that streams beside the list scheduler (it could visit nodes
//!   as they start): with one worker the reduction takes ~0.84 s, so that would end ~0.2 s sooner
//!   than now at best, not under 1 s.
//! - **The two reduction workers split at the core where half the work (nodes plus incoming
//!   edges) is queued**, not half the nodes: sync 571–651 ms against 518–644; no difference shows.
//! - **The reduction rank by rank**: clocks kept only from producers on the consumer's own rank
//!   (an edge from another rank is a put's, which only its own signal settles, or is kept), each
//!   worker visiting its ranks one after another so that one rank's clocks are live at a time:
//!   sync 536–597 ms against 556–571, no faster, though its working set is a rank's. It keeps
//!   fewer waits (10^6 2 809 348 → 2 783 672; the main job's balanced forward tables 0.4–5.3%
//!   fewer), because near a rank's first and last core the cap no longer keeps the neighbouring rank's
//!   cores, which never decide an edge, in place of its own; but the tables change and the main
//!   job's simulated runs move both ways (forward EP 128 14 612 → 15 015 µs, training step EP 32
//!   34 467 → 34 051), so it was left for a change that is judged on its tables.
//! - **A clock cap of 16** instead of 32: sync 497 ms against ~590, but 14% more waits
//!   (2 809 348 → 3 192 896).
//!
//! Since then (stop 32; same plans: the two workers keep the one worker's edges, fingerprints
//! equal): the reduction walks on two workers from 2^16 nodes (the threshold of the stages that
//! run side by side) instead of 2^18, which puts the 10^5 row on two. Three alternating pairs,
//! `--quick --runs 3`, 10^5 row, idle machine: sync 48–50 ms against 91–98 ms, total 203–217 ms
//! against 256–275 ms, CPU 240–260 ms against 260–280 ms. (At 10^4, with a threshold of 2^12
//! for the experiment, two workers still gained 1–3 ms of 5–8; not taken, below the threshold a
//! plan's stages are a few milliseconds.) At 10^6 nothing changes: 1.33–1.41 s on this day's
//! machine (stages: expand 93–135, list 345–383, proof 50, sync 559–600, flags + table 171–231 ms;
//! instrumented, the reduction 527–581 ms, the table's assembly 96–103 ms, the flag-side edit
//! 30–38 ms). 10^6 instances in under 1 s is not reached.
//!
//! Since then (stop 34; other plans): the producers of link puts break ties by their puts' send
//! round (README, "Producers in their puts' rounds"), so every row plans differently; new
//! fingerprints at 10^3 … 10^6 `8bbeb62c 92df274e`, `5494ff58 da98f6d3`, `1346446d 276db51b`,
//! `acf6f699 0167ee2c`. At 10^6 the reduction keeps 4.5% more waits (2 936 782 against
//! 2 809 348) and the plan costs the same: one `--no-limit --runs 3`, idle machine, 1.26 s wall,
//! 1.66 s CPU (stages: expand 92, list 322, proof 49, sync 570, flags + table 182 ms). 10^6
//! instances in under 1 s is not reached.
//!
//! Tried at stop 35 and not kept: a smaller clock cap (`CLOCK_CAP`, one build each of main
//! `6bc64c0`, `--no-limit --runs 2`, idle machine; 10^6 row: waits, sync ms, total ms). Cap 32
//! (main): 2 936 782, 539, 1185. Cap 16: 3 194 264, 425, 1067. Cap 8: 3 264 720, 327, 947. Cap 4:
//! 3 272 960, 322, 1010. Cap 1 (every cross-core edge kept): 3 280 896, 305, 985. So the walk
//! itself (visiting a million nodes and 3.3 million edges, counting successors, the counters of
//! the kept edges) costs ~300 ms on two workers whatever the cap, and the clocks at cap 32 cost
//! the other ~230 ms for 10.5% fewer waits. Cap 8 gets the row under a second on a good run and
//! not on a bad one (the machine swings ±15%), for 11% more waits on every large plan (the
//! DeepSeek-V3 layer at EP 64 priced the same within ±1.5%: forward 1.129 → 1.113×, training step
//! 1.160 → 1.165×); not a trade the goal justifies.
//!
//! Since then (stop 35; same plans, other tables): the table paces the puts into a die from the
//! dies of its server (`schedule::pacing`, README "Receivers paced within a server"), which the
//! MoE rows get (their lanes go by round), so every row's table changes: fingerprints at 10^3 …
//! 10^6 `cc632f74 04dfe2af`, `1cede45e f0262b4a`, `0e1443ae 99a5c259`, `01fa712a 5435c1fa`
//! (the plans' makespans are unchanged: pacing never moves a plan). At 10^6 it adds 141 082
//! waits (3 077 864 against 2 936 782, +4.8%) and costs ~60 ms: main and this version one after
//! the other, `--no-limit --runs 2`, 1144 against 1207 ms (stages: proof 47 → 87, which now
//! includes finding the pacing dependencies and merging them into a copy of the DAG, sync 495 →
//! 548, flags + table 149 → 198 ms; CPU 1540 against 1650 ms). Merging them row by row instead
//! of rebuilding the DAG from its pairs saved ~40 ms of that; the receivers come from the
//! scheduler's own setup (computing the lanes again cost ~70 ms). 10^6 instances in under 1 s
//! is not reached.
//!
//! Measured again at stop 38 on that session's machine, no change to the pipeline since (same
//! fingerprints at every size, 2^23 `11b3304d f0124eeb`): an AMD EPYC of `lscpu`'s family 25,
//! model 17, 2 vCPUs under KVM, idle but for this bench (load average 1.0–1.7, which the bench
//! itself makes), the machine the session's CI ran on. Eight sittings, four of `--no-limit
//! --runs 2` and three of `--runs 2` (every row), one more of `--no-limit --runs 1` under
//! `perf record`; 10^6 row, ms:
//!
//! | 10^6 instances    | stop 38's machine  |
//! |-------------------|-------------------:|
//! | total, wall       | 704–908            |
//! | total, CPU        | 980–1280           |
//! | expand            | 47–93              |
//! | list              | 216–267            |
//! | proof             | 57–88              |
//! | sync              | 264–397            |
//! | flags + table     | 113–136            |
//!
//! So **10^6 instances go through the whole plan in under 1 s of wall time on that machine**,
//! with 9–30% to spare; the 2^23 row took 9.3–10.8 s. The code is the one that took 1.06–1.7 s
//! on the machines of the earlier sessions above (up to 1.7 times slower: every stage is
//! slower there in about the same proportion), so the figure is the machine's as much as the
//! code's: on a machine like those it is not met. The table's certificate
//! ([`hpmoe_core::certify::verify`], which every consumer of a table runs before using it) is not
//! part of the plan and not in these figures: on the same machine `certify_scale` checks the
//! DeepSeek-V3 EP 64 table (430 080 instances) in 0.86 s.
//!
//! Later at stop 38 the table paces every sender into a receiver, not only those of its server
//! (README, "Receivers paced"), and a put across servers holds its rank's tier for half its
//! fixed part besides its bytes (README, "The scheduler's server tier"), so the rows beyond one
//! server plan other tables: fingerprints at 10^6 `8cf81c77 47b0a46d` (3 033 122 waits, 44 742
//! fewer: a paced put's wait often covers a dependency the reduction had kept), at 2^23
//! `2104b255 a3c93226`; the rows up to 10^5 (one server) are unchanged. The tier's bound
//! (`Net::tier_bound_ns`) counts the half fixed parts too: without them the 10^6 plan's first
//! pass was no longer within 1/64 of the bound, an improvement round ran (and did not win), and
//! the row took 905–971 ms. Same machine, two sittings of `--no-limit --runs 2`: 10^6 in 730–742
//! ms of wall time (CPU 1000–1010 ms), and one of `--runs 1` (every row, each planned once):
//! 804 ms, 2^23 10.2 s.
//!
//! Since stop 39 (README, "More lanes beyond one server") the 2^23 row's first pass is far enough
//! above its bound that the scheduler plans it once more with a lane more, and keeps nothing (same
//! fingerprints): measured in one sitting at stop 40, the row took 8.7 s on stop 38's code and
//! 19.2 s on stop 39's (10^6, which tries no lane more: 838 and 854–891 ms). Since stop 40 the plan
//! with a lane more runs beside the first plan's improvement rounds on a second core (the same
//! plans): 14.4 s (CPU 23.2 → 20.7 s). Also since stop 40 a node whose latest input comes from
//! another server takes the idle core idle longest (README, "Which idle core beyond one server"),
//! so the rows beyond one server plan other tables: 10^6 `a6d2f9a0 1729e457` (3 058 789 waits),
//! 2^23 `d8bc2b92 dc2127fd`; the rows up to 10^5 are unchanged. Its cost does not show: in one
//! sitting (a slower day of the same machine) `--no-limit --runs 2` took 854 and 891 ms for 10^6 on
//! stop 39's code and 793–867 ms with the idle-core rule (four runs), and `--runs 1` 19.2 and
//! 20.1 s for 2^23 before the trial ran beside the rounds.

use hpmoe_core::limits::{MAX_FAMILY_INSTANCES, MAX_INSTANCES};
use hpmoe_core::model::{CoreKind, DType, Taskflow};
use hpmoe_host::moe::MoeShape;
use std::cmp::Reverse;
use std::time::Instant;

/// The layer with the most instances (all ranks) not above `target` among those whose ranks
/// divide `target` and whose padding fits one family: among those within 5% of the target,
/// the most ranks, then experts (else the least padding): 2..64 ranks, 2..256 experts, 32..65536 tokens per rank (in
/// steps of 32), 32 weighted-sum tiles per rank, DeepSeek-V3's row block or the one that gives
/// each (source, expert) pair one block.
fn shape_below(target: u64) -> MoeShape {
    let mut best: Option<(u64, MoeShape)> = None;
    for ranks in [2u32, 4, 8, 16, 32, 64] {
        if !target.is_multiple_of(u64::from(ranks)) {
            continue;
        }
        for experts in [2u64, 4, 8, 16, 32, 64, 128, 256] {
            for tokens in (1..=2048).map(|k| 32 * k) {
                let mut s = MoeShape::deepseek_v3(ranks, tokens);
                s.experts = experts;
                // 32 weighted-sum tiles (token blocks) per rank.
                s.sum_rows = (tokens / 32).max(1);
                // The row block DeepSeek-V3's 256 experts give, or the one these experts give.
                let per_source = (tokens * s.top_k / experts).clamp(1, 128);
                for row_block in [s.row_block, per_source] {
                    let s = MoeShape { row_block, ..s.clone() };
                    if s.validate().is_err() {
                        continue;
                    }
                    let total = s.instances_per_rank() * u64::from(ranks);
                    let Some(pad) = target.checked_sub(total) else { continue };
                    if pad / u64::from(ranks) > MAX_FAMILY_INSTANCES {
                        continue;
                    }
                    // Within 5% of the target, the most ranks and experts; else the least pad.
                    let score = |pad: u64, s: &MoeShape| {
                        let close = pad <= target / 20;
                        (close, if close { (u64::from(s.ranks), s.experts) } else { (0, 0) }, Reverse(pad))
                    };
                    if best.as_ref().is_none_or(|(p, b)| score(pad, &s) >= score(*p, b)) {
                        best = Some((pad, s));
                    }
                }
            }
        }
    }
    best.expect("some shape fits").1
}

/// The taskflow of `shape` padded to exactly `target` instances.
fn taskflow_of(shape: &MoeShape, target: u64) -> Taskflow {
    let mut tf = shape.taskflow().expect("valid shape");
    let ranks = u64::from(shape.ranks);
    let pad = (target - shape.instances_per_rank() * ranks) / ranks;
    if pad > 0 {
        let scratch = tf.scratch("PAD", DType::F32, &[pad, 16]);
        tf.tile("pad", CoreKind::Aiv, |tb| {
            let i = tb.grid("i", pad);
            tb.op("zero", [scratch.at(i)]);
        });
    }
    tf
}

/// FNV-1a of `bytes`: with the table's checksum, a fingerprint of the plan, so two builds'
/// rows can be checked to plan alike.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// CPU time (user + system, every thread) this process has used so far, on Linux: the
/// `utime` and `stime` fields of `/proc/self/stat`, in the 1/100 s ticks Linux shows there.
fn process_cpu() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(std::time::Duration::from_millis(ticks * 10))
}

/// The plan of `tf`, how long it took, and the CPU time it took (all threads; to 10 ms).
fn plan_timed(tf: &Taskflow) -> (hpmoe_core::Compiled, std::time::Duration, Option<std::time::Duration>) {
    let cpu = process_cpu();
    let t = Instant::now();
    let c = hpmoe_core::plan(tf).unwrap_or_else(|d| panic!("{d}"));
    let wall = t.elapsed();
    (c, wall, process_cpu().zip(cpu).map(|(after, before)| after.saturating_sub(before)))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let no_limit = std::env::args().any(|a| a == "--no-limit");
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .map(|i| args.get(i + 1).and_then(|n| n.parse::<u32>().ok()).expect("--runs takes a number"))
        .unwrap_or(1)
        .max(1);
    let mut targets = vec![1_000u64, 10_000, 100_000];
    if !quick {
        targets.push(1_000_000);
        if !no_limit {
            targets.push(MAX_INSTANCES);
        }
    }
    println!(
        "{:>9} {:>5} {:>7} {:>7} {:>6} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>12} {:>9} {:>8} {:>7} {:>8} {:>8}",
        "instances",
        "ranks",
        "experts",
        "tokens",
        "pad",
        "edges",
        "total_ms",
        "cpu_ms",
        "cost",
        "check",
        "expand",
        "list",
        "proof",
        "sync",
        "flg+tbl",
        "instances/s",
        "waits",
        "B/entry",
        "nlogn",
        "table",
        "flags"
    );
    let mut base = None;
    for &target in &targets {
        let shape = shape_below(target);
        let tf = taskflow_of(&shape, target);
        // Each column's least time over the runs (the plans are identical).
        let (mut c, mut total, mut cpu) = plan_timed(&tf);
        for _ in 1..runs {
            let (again, t, again_cpu) = plan_timed(&tf);
            total = total.min(t);
            cpu = cpu.zip(again_cpu).map(|(a, b)| a.min(b));
            let (best, new) = (&mut c.times, &again.times);
            best.structure = best.structure.min(new.structure);
            best.expand = best.expand.min(new.expand);
            best.order_checks = best.order_checks.min(new.order_checks);
            best.list_schedule = best.list_schedule.min(new.list_schedule);
            best.deadlock_proof = best.deadlock_proof.min(new.deadlock_proof);
            best.sync = best.sync.min(new.sync);
            best.table = best.table.min(new.table);
        }
        assert_eq!(c.expanded.nodes() as u64, target, "the taskflow has exactly the target's instances");
        let n = c.expanded.nodes() as f64;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let per_nlogn = total.as_secs_f64() * 1e9 / (n * n.log2());
        let norm = per_nlogn / *base.get_or_insert(per_nlogn);
        let times = &c.times;
        println!(
            "{:>9} {:>5} {:>7} {:>7} {:>6} {:>10} {:>9.1} {:>8} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>12.0} {:>9} {:>8.1} {:>7.2} {:08x} {:08x}",
            c.expanded.nodes(),
            shape.ranks,
            shape.experts,
            shape.tokens_per_rank,
            target - shape.instances_per_rank() * u64::from(shape.ranks),
            c.expanded.dag.edges(),
            ms(total),
            cpu.map_or("-".to_string(), |d| format!("{:.0}", ms(d))),
            // The cost model and the checks `plan` runs before the pipeline's stages.
            ms(total.saturating_sub(times.total())),
            ms(times.structure + times.order_checks),
            ms(times.expand),
            ms(times.list_schedule),
            ms(times.deadlock_proof),
            ms(times.sync),
            ms(times.table),
            n / total.as_secs_f64(),
            c.sync.cross_edges_after,
            c.table.bytes_per_entry(),
            norm,
            c.table.checksum(),
            fnv1a(&c.flags_bin)
        );
    }
}
