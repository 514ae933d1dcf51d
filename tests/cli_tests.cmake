# Command-line cases for the `tetwarp` tool, included from tests/CMakeLists.txt.
#
# Bad input: one case per class, run through expect_fail.sh REGEX CMD...,
# which passes only when the tool exits non-zero (cleanly: no signal, no
# sanitizer report) with a message matching REGEX. Good input: --help, info on
# a mesh from data/, and static/run writing CSVs of the right length, run
# through expect_ok.sh REGEX CMD..., which checks the exit status (0) as well
# as the output.
set(TW_CLI_TMP ${CMAKE_CURRENT_BINARY_DIR}/tmp/cli) # its own folder: other tests write tests/tmp
set(TW_CLI_MESHES ${TW_DATA_DIR}/meshes)
file(MAKE_DIRECTORY ${TW_CLI_TMP})

# One OpenMP thread: these cases test the tool, not threading, and many small
# parallel regions on a busy 2-core machine (ctest -j2) spin for seconds.
set(TW_CLI_ENV OMP_NUM_THREADS=1)
# a small bar keeps every case well under a second
set(TW_CLI_BAR --bar 1,0.1,0.1,4,1,1)
set(TW_CLI_BAR_VERTICES 20) # (4+1)*(1+1)*(1+1)

# cli.NAME passes when `tetwarp ARGN` fails with output matching REGEX
function(tw_cli_fails name regex)
  add_test(NAME cli.${name}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_fail.sh "${regex}"
                   $<TARGET_FILE:tetwarp> ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})
endfunction()

# cli.NAME passes when `tetwarp ARGN` exits with STATUS (1: a failure, 2: a bad
# command line) and output matching REGEX
function(tw_cli_exits name status regex)
  add_test(NAME cli.${name}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_fail.sh --status ${status} "${regex}"
                   $<TARGET_FILE:tetwarp> ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})
endfunction()

# cli.NAME passes when `tetwarp ARGN` exits 0 and prints something matching
# REGEX (one line: expect_ok.sh checks both; PASS_REGULAR_EXPRESSION alone
# would ignore the exit status)
function(tw_cli_prints name regex)
  add_test(NAME cli.${name}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_ok.sh "${regex}"
                   $<TARGET_FILE:tetwarp> ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})
endfunction()

# cli.NAME passes when `tetwarp ARGN` exits 0 and leaves FILE with LINES lines,
# the first exactly HEADER
function(tw_cli_writes_csv name file lines header)
  add_test(NAME cli.${name}
           COMMAND sh -c "rm -f '${file}' && \"$0\" \"$@\" && test \"$(wc -l < '${file}')\" -eq ${lines} && test \"$(head -n 1 '${file}')\" = '${header}' || { echo 'FAIL: ${file} should have ${lines} lines, the first ${header}; it has:'; wc -l '${file}'; head -n 3 '${file}'; exit 1; }"
                   $<TARGET_FILE:tetwarp> ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})
endfunction()

# ---- bad mesh files, written at configure time
file(WRITE ${TW_CLI_TMP}/truncated.msh
  "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n")
file(WRITE ${TW_CLI_TMP}/empty.msh "")
file(WRITE ${TW_CLI_TMP}/truncated.node "4 3 0 0\n1 0 0 0\n2 1 0 0\n")
file(WRITE ${TW_CLI_TMP}/truncated.ele "1 4 0\n1 1 2 3 4\n")
file(WRITE ${TW_CLI_TMP}/nonnumeric.node "4 3 0 0\n1 0 0 0\n2 1 abc 0\n3 0 1 0\n4 0 0 1\n")
file(WRITE ${TW_CLI_TMP}/nonnumeric.ele "1 4 0\n1 1 2 3 4\n")
file(WRITE ${TW_CLI_TMP}/badindex.node "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n")
file(WRITE ${TW_CLI_TMP}/badindex.ele "1 4 0\n1 1 2 3 9\n")
file(WRITE ${TW_CLI_TMP}/flat.node "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n")
file(WRITE ${TW_CLI_TMP}/flat.ele "1 4 0\n1 1 2 3 4\n")
# two tets sharing the face 2-3-4; the second is listed inverted
file(WRITE ${TW_CLI_TMP}/inverted.node
  "5 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n")
file(WRITE ${TW_CLI_TMP}/inverted.ele "2 4 0\n1 1 2 3 4\n2 5 2 3 4\n")
# two positive tets on the same side of their shared face 1-2-3 (folded)
file(WRITE ${TW_CLI_TMP}/folded.node "5 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 0.2 0.2 0.5\n")
file(WRITE ${TW_CLI_TMP}/folded.ele "2 4 0\n1 1 2 3 4\n2 1 2 3 5\n")
file(WRITE ${TW_CLI_TMP}/mesh.xyz "0 0 0\n")
file(WRITE ${TW_CLI_TMP}/one_tet.node "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n")
file(WRITE ${TW_CLI_TMP}/one_tet.ele "1 4 0\n1 1 2 3 4\n")

# ---- command line
tw_cli_fails(no_command "usage: tetwarp" )
tw_cli_fails(unknown_command "unknown command 'frobnicate'" frobnicate)
tw_cli_fails(unknown_option "unknown option '--bogus'" run ${TW_CLI_BAR} --bogus 1)
tw_cli_fails(unexpected_argument "unexpected argument 'extra'" static ${TW_CLI_BAR} extra)
tw_cli_fails(missing_value "option --E needs a value" run ${TW_CLI_BAR} --E)
tw_cli_fails(missing_value_before_option "option --E needs a value" run --E --nu 0.3)
tw_cli_fails(non_numeric "--E 'abc': not a number" run ${TW_CLI_BAR} --E abc)
tw_cli_fails(trailing_junk "--E '1e6x': not a number" run ${TW_CLI_BAR} --E 1e6x)
tw_cli_fails(nan "--E 'nan'.*not finite" run ${TW_CLI_BAR} --E nan)
tw_cli_fails(inf "--E 'inf'.*not finite" run ${TW_CLI_BAR} --E inf)
tw_cli_fails(negative_E "--E -1e6: must be > 0" run ${TW_CLI_BAR} --E -1e6)
tw_cli_fails(zero_E "--E 0: must be > 0" static ${TW_CLI_BAR} --E 0)
tw_cli_fails(nu_half "--nu 0.5: must be in \\(-1, 0.5\\)" run ${TW_CLI_BAR} --nu 0.5)
tw_cli_fails(nu_minus_one "--nu -1: must be in \\(-1, 0.5\\)" run ${TW_CLI_BAR} --nu -1)
tw_cli_fails(rho_zero "--rho 0: must be > 0" run ${TW_CLI_BAR} --rho 0)
tw_cli_fails(dt_zero "--dt 0: must be > 0" run ${TW_CLI_BAR} --dt 0)
tw_cli_fails(dt_negative "--dt -0.01: must be > 0" run ${TW_CLI_BAR} --dt -0.01)
tw_cli_fails(integrator_unknown "--integrator rk4: must be implicit-euler, bdf2 or explicit-newmark" run ${TW_CLI_BAR} --integrator rk4)
tw_cli_fails(explicit_dt_above_courant "exceeds the explicit Newmark stability limit" run ${TW_CLI_BAR} --integrator explicit-newmark --dt 0.01)
tw_cli_fails(steps_zero "--steps 0: must be >= 1" run ${TW_CLI_BAR} --steps 0)
tw_cli_fails(steps_fraction "--steps '1.5': not an integer" run ${TW_CLI_BAR} --steps 1.5)
tw_cli_fails(unknown_method "--method 'warp': unknown method \\(choose linear, warp-vertex" run ${TW_CLI_BAR} --method warp)
tw_cli_fails(unknown_backend "--backend 'gpu': unknown backend \\(choose cpu, cuda, auto\\)" run ${TW_CLI_BAR} --backend gpu)
tw_cli_fails(bar_malformed "--bar '1,0.1': 6 comma-separated values expected" run --bar 1,0.1)
tw_cli_fails(bar_cells_fraction "--bar .*cell count NX = 2.5 must be a whole number" run --bar 1,0.1,0.1,2.5,1,1)
tw_cli_exits(bar_cells_limit 2 "--bar .*cell count NX = 1e\\+08 must be a whole number from 1 to 100000" run --bar 1,1,1,100000000,1,1)
tw_cli_exits(bar_too_many_tets 2 "--bar .*6 x NX x NY x NZ = 6e\\+09 tets; a mesh holds at most 2e\\+09" run --bar 1,1,1,1000,1000,1000)
tw_cli_fails(gravity_malformed "--gravity '0,0': 3 comma-separated values expected" run ${TW_CLI_BAR} --gravity 0,0)
tw_cli_fails(damping_negative "--damping -1,0: must be >= 0" run ${TW_CLI_BAR} --damping -1,0)
tw_cli_fails(cg_tol_zero "--cg-tol 0: must be in \\(0, 1\\)" run ${TW_CLI_BAR} --cg-tol 0)
tw_cli_fails(cg_max_zero "--cg-max 0: must be >= 1" run ${TW_CLI_BAR} --cg-max 0)
tw_cli_fails(threads_negative "--threads -2: must be from 0 \\(all threads\\) to 1024" run ${TW_CLI_BAR} --threads -2)
tw_cli_fails(probe_out_of_range "--probe 20: no such vertex \\(the mesh has 20 vertices" run ${TW_CLI_BAR} --steps 1 --probe 20)
tw_cli_fails(obj_every_zero "--obj-every 0: must be >= 1" run ${TW_CLI_BAR} --obj-every 0)
tw_cli_fails(load_steps_zero "--load-steps 0: must be >= 1" static ${TW_CLI_BAR} --load-steps 0)
tw_cli_fails(tol_negative "--tol -1: must be > 0" static ${TW_CLI_BAR} --tol -1)
tw_cli_fails(fix_malformed "--fix 'x=0': malformed" run ${TW_CLI_BAR} --fix x=0)
tw_cli_fails(fix_axis "--fix 'w<0': malformed" run ${TW_CLI_BAR} --fix w<0)
tw_cli_fails(fix_selects_none "--fix 'x<-5' selects no vertex \\(x range of the mesh is \\[0, 1\\]\\)" run ${TW_CLI_BAR} --fix x<-5)
tw_cli_fails(fix_selects_all "--fix 'z>-1' selects every vertex" run ${TW_CLI_BAR} --fix z>-1)
tw_cli_exits(fix_none_combined 2 "--fix 'none': --fix none cannot be combined with another --fix" run ${TW_CLI_BAR} --fix x<0.5 --fix none)
tw_cli_exits(static_fix_none 2 "nothing is fixed" static ${TW_CLI_BAR} --fix none)
tw_cli_exits(max_memory_zero 2 "--max-memory 0: must be > 0" run ${TW_CLI_BAR} --max-memory 0)
# refused before anything is built: over --max-memory, over any machine's memory
tw_cli_exits(bar_over_max_memory 1 "--bar: 4.8e\\+07 tets need about [0-9.]+ GB of memory, more than the 0.1 GB --max-memory" run --bar 1,1,1,200,200,200 --max-memory 100)
tw_cli_exits(bar_over_available_memory 1 "--bar: 1.8e\\+09 tets need about [0-9.]+ GB of memory, more than the [0-9.]+ GB available" run --bar 1,1,1,1000,1000,300)
tw_cli_fails(fix_together_all "--fix options together select every vertex" static ${TW_CLI_BAR} --fix x<0.5 --fix x>0.4)
tw_cli_fails(static_nothing_fixed "nothing is fixed" static --mesh ${TW_CLI_MESHES}/liver_sofa.msh)
# solvers that must not report success on garbage: one pinned vertex (a
# singular K), a modulus beyond float, a load beyond the real type
tw_cli_exits(static_singular_k 1 "no convergence at load .*singular stiffness" static --mesh ${TW_CLI_TMP}/one_tet.node --fix x>0.5 --method linear)
tw_cli_exits(static_singular_k_corot 1 "no convergence at load .*singular stiffness" static --mesh ${TW_CLI_TMP}/one_tet.node --fix x>0.5 --method corot-element)
tw_cli_exits(static_load_not_finite 1 "the load is not finite" static ${TW_CLI_BAR} --rho 1e308 --gravity 0,0,-1e300)
if(NOT TW_DOUBLE)
  tw_cli_exits(static_E_beyond_float 1 "the force at the start is not finite.*1e\\+39 Pa" static ${TW_CLI_BAR} --E 1e39)
  tw_cli_exits(static_rho_beyond_float 1 "the load is not finite" static ${TW_CLI_BAR} --rho 1e300)
  # below the float forces' rounding floor: the result is written, the exit status is 1
  add_test(NAME cli.static_stalled_short_of_tol
           COMMAND sh -c "rm -f \"$1\" && sh \"$2\" --status 1 'not converged to --tol 1e-08: the relative residual stopped falling' \"$0\" static --bar 1,0.1,0.1,4,1,1 --method green --tol 1e-8 --out \"$1\" && test \"$(wc -l < \"$1\")\" -eq 21 || { echo 'FAIL: expected exit 1 and' \"$1\" 'with 21 lines'; exit 1; }"
                   $<TARGET_FILE:tetwarp> ${TW_CLI_TMP}/cli_static_stalled.csv ${CMAKE_CURRENT_SOURCE_DIR}/expect_fail.sh)
  set_tests_properties(cli.static_stalled_short_of_tol PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})
endif()
tw_cli_fails(E_gradient_malformed "--E-gradient 'q,1,2': malformed" run ${TW_CLI_BAR} --E-gradient q,1,2)
tw_cli_fails(E_gradient_negative "--E-gradient 'x,-1,2': E0 and E1 must be > 0" run ${TW_CLI_BAR} --E-gradient x,-1,2)
tw_cli_fails(E_region_malformed "--E-region '1=2e6': item '1=2e6' has no ':'" run ${TW_CLI_BAR} --E-region 1=2e6)
tw_cli_fails(E_region_missing "--E-region 7:2e\\+?0?6: no element has region 7" run ${TW_CLI_BAR} --E-region 7:2e6)
tw_cli_fails(mesh_and_bar "give --mesh or --bar, not both" run ${TW_CLI_BAR} --mesh ${TW_CLI_MESHES}/liver_sofa.msh)
tw_cli_fails(strict_value "--strict takes no value" run ${TW_CLI_BAR} --strict=1)
tw_cli_fails(diverged "tetwarp run: step 1[^0-9]" run ${TW_CLI_BAR} --E 1 --gravity 0,0,-1e30 --steps 3)
tw_cli_fails(help_unknown "unknown command 'fly'" help fly)
if(NOT TW_HAVE_CUDA)
  tw_cli_fails(backend_cuda_absent "--backend cuda: .*(cuda|gpu)" run ${TW_CLI_BAR} --steps 1 --backend cuda)
endif()

# ---- mesh files
tw_cli_fails(info_no_mesh "no mesh file given" info)
tw_cli_fails(info_missing_file "does-not-exist\\.msh: cannot open" info ${TW_CLI_TMP}/does-not-exist.msh)
tw_cli_fails(run_missing_file "cannot load --mesh: .*does-not-exist\\.node: cannot open" run --mesh ${TW_CLI_TMP}/does-not-exist.node)
tw_cli_fails(info_truncated_msh "truncated\\.msh:[0-9]+: expected" info ${TW_CLI_TMP}/truncated.msh)
tw_cli_fails(info_empty_msh "empty\\.msh" info ${TW_CLI_TMP}/empty.msh)
tw_cli_fails(info_truncated_node "truncated\\.node:[0-9]+: expected" info ${TW_CLI_TMP}/truncated.node)
tw_cli_fails(info_nonnumeric "nonnumeric\\.node:3: expected" info ${TW_CLI_TMP}/nonnumeric.node)
tw_cli_fails(info_bad_index "badindex\\.ele:2: .*9" info ${TW_CLI_TMP}/badindex.node)
tw_cli_fails(info_degenerate "flat\\.ele:2: element 1 has zero volume" info ${TW_CLI_TMP}/flat.node)
tw_cli_fails(info_unknown_format "mesh\\.xyz: unknown mesh format" info ${TW_CLI_TMP}/mesh.xyz)
tw_cli_fails(info_strict_inverted "element 2 is inverted" info ${TW_CLI_TMP}/inverted.node --strict)
tw_cli_fails(run_strict_inverted "element 2 is inverted" run --mesh ${TW_CLI_TMP}/inverted.node --strict --steps 1)
tw_cli_fails(info_strict_folded "folded\\.ele:3: element 2 overlaps element 1 on line 2 across their shared face" info ${TW_CLI_TMP}/folded.node --strict)

# ---- good input
tw_cli_prints(help "Usage: tetwarp COMMAND" --help)
tw_cli_prints(help_info "--strict" info --help)
tw_cli_prints(help_static "--load-steps N" static --help)
tw_cli_prints(help_run "--obj-dir DIR" run --help)
tw_cli_prints(help_topic "--dt S" help run)
tw_cli_prints(version "tetwarp [0-9.]+ \\((float|double)\\)" --version)
tw_cli_prints(info_liver "^vertices +181$" info ${TW_CLI_MESHES}/liver_sofa.msh)
tw_cli_prints(info_reoriented "reoriented +1 elements" info ${TW_CLI_TMP}/inverted.node)
tw_cli_prints(info_folded "^folded +1 element pairs .*; first: elements 1 and 2$" info ${TW_CLI_TMP}/folded.node)
tw_cli_prints(info_liver_not_folded "^folded +0 element pairs" info ${TW_CLI_MESHES}/liver_sofa.msh)
# one short line on the backend `auto` chose; the whole reason under --verbose
tw_cli_prints(run_auto_backend "^backend: (cuda \\(auto\\)|cpu \\((no CUDA device|this build has no CUDA)\\))$" run ${TW_CLI_BAR} --steps 1)
tw_cli_prints(run_verbose_backend "^backend: (cuda \\(auto\\)|cpu \\(auto; cuda not used: .*(CUDA|cuda).*\\))$" run ${TW_CLI_BAR} --steps 1 --verbose)
tw_cli_prints(info_backend "^backend +(cpu|cuda) \\(what --backend auto runs on\\)$" info --backend)
tw_cli_prints(help_run_integrators "^Time-stepping: implicit Euler, BDF2 or explicit Newmark" run --help)
tw_cli_prints(run_fix_none_floor "^bar .*: 20 vertices, 24 tets, 0 fixed;" run ${TW_CLI_BAR} --fix none --floor -0.05,0.5 --steps 5)
tw_cli_prints(run_cg_cap "^warning: CG stopped at its cap of 2 iterations short of --cg-tol 0.0001 in 3 of 3 steps" run ${TW_CLI_BAR} --steps 3 --cg-max 2)
# a large problem says its memory and each phase as it starts
add_test(NAME cli.run_large_phases
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_ok.sh "^memory: about 0\\.[0-9]+ GB for 1\\.2e\\+05 tets"
                 --and "^generating the bar: 1\\.2e\\+05 tets\\.\\.\\.$" --and "^world ready in "
                 $<TARGET_FILE:tetwarp> run --bar 1,0.1,0.1,100,10,20 --steps 1 --cg-max 1)
set_tests_properties(cli.run_large_phases PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})
tw_cli_prints(run_inhomogeneous "2 steps" run ${TW_CLI_BAR} --steps 2 --E-gradient x,1e5,1e6 --E-region 0:2e6)
tw_cli_prints(run_liver "3 steps" run --mesh ${TW_CLI_MESHES}/liver_sofa.msh --fix z<-1 --steps 3 --method warp-vertex)
tw_cli_prints(static_says_criterion "^converged: (relative residual [^ ]+ <= --tol 0.0001|Newton update [^ ]+ of \\|u\\| <= --tol 0.0001)" static ${TW_CLI_BAR} --tol 1e-4)
tw_cli_prints(static_linear_residual "^converged: relative residual [^ ]+ <= --tol" static ${TW_CLI_BAR} --method linear)
tw_cli_writes_csv(static_csv ${TW_CLI_TMP}/cli_static.csv 21 "vertex,ux,uy,uz"
                  static ${TW_CLI_BAR} --out ${TW_CLI_TMP}/cli_static.csv)
tw_cli_writes_csv(run_csv ${TW_CLI_TMP}/cli_run.csv 6
                  "step,time,volume,kinetic_energy,elastic_energy,gravity_energy,cg_iterations,residual,step_ms,probe_ux,probe_uy,probe_uz"
                  run ${TW_CLI_BAR} --steps 5 --csv ${TW_CLI_TMP}/cli_run.csv)
add_test(NAME cli.run_obj
         COMMAND sh -c "rm -rf \"$1\" && \"$0\" run --bar 1,0.1,0.1,4,1,1 --steps 4 --obj-every 2 --obj-dir \"$1\" && test -s \"$1/frame_000000.obj\" && test -s \"$1/frame_000002.obj\" && test -s \"$1/frame_000004.obj\" || { echo 'FAIL: expected frames 0, 2, 4 in' \"$1\"; ls -l \"$1\"; exit 1; }"
                 $<TARGET_FILE:tetwarp> ${TW_CLI_TMP}/cli_frames)
set_tests_properties(cli.run_obj PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})

# ---- tetwarp mesh (the positive case skips where TetGen is not installed)
file(WRITE ${TW_CLI_TMP}/octahedron.off
  "OFF\n6 8 0\n1 0 0\n-1 0 0\n0 1 0\n0 -1 0\n0 0 1\n0 0 -1\n3 0 2 4\n3 2 1 4\n3 1 3 4\n3 3 0 4\n3 2 0 5\n3 1 2 5\n3 3 1 5\n3 0 3 5\n")
file(WRITE ${TW_CLI_TMP}/open_octahedron.off
  "OFF\n6 7 0\n1 0 0\n-1 0 0\n0 1 0\n0 -1 0\n0 0 1\n0 0 -1\n3 0 2 4\n3 2 1 4\n3 1 3 4\n3 3 0 4\n3 2 0 5\n3 1 2 5\n3 3 1 5\n")
tw_cli_fails(mesh_missing_file "does-not-exist\\.off: cannot open" mesh ${TW_CLI_TMP}/does-not-exist.off --tets 1000 --out ${TW_CLI_TMP}/m --no-cache)
tw_cli_fails(mesh_open_surface "3 boundary edges in 1 boundary loops.*the surface has holes" mesh ${TW_CLI_TMP}/open_octahedron.off --tets 1000 --out ${TW_CLI_TMP}/m --no-cache)
tw_cli_fails(mesh_no_size "give --tets N or --edge H" mesh ${TW_CLI_TMP}/octahedron.off --out ${TW_CLI_TMP}/m)
tw_cli_fails(mesh_no_out "no --out PATH given" mesh ${TW_CLI_TMP}/octahedron.off --tets 100)
tw_cli_fails(mesh_quality_one "--quality 1: must be > 1" mesh ${TW_CLI_TMP}/octahedron.off --tets 100 --quality 1 --out ${TW_CLI_TMP}/m)
tw_cli_fails(mesh_unknown_format "surface\\.xyz: unknown surface format" mesh ${TW_CLI_TMP}/surface.xyz --tets 100 --out ${TW_CLI_TMP}/m --no-cache)
tw_cli_prints(help_mesh "--tets N" mesh --help)
add_test(NAME cli.mesh_octahedron
         COMMAND sh -c "command -v tetgen >/dev/null || { echo 'skipped: tetgen not found (apt-get install tetgen)'; exit 77; }; rm -f \"$1.node\" \"$1.ele\" && \"$0\" mesh \"$2\" --edge 0.25 --out \"$1\" --no-cache && test -s \"$1.node\" && test -s \"$1.ele\" && \"$0\" info \"$1\" | grep -q 'volume  *1\\.3333' || { echo 'FAIL: expected' \"$1.node/.ele\" 'enclosing the octahedron volume 4/3'; exit 1; }"
                 $<TARGET_FILE:tetwarp> ${TW_CLI_TMP}/octahedron_mesh ${TW_CLI_TMP}/octahedron.off)
set_tests_properties(cli.mesh_octahedron PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV} SKIP_RETURN_CODE 77)

# colliders
tw_cli_fails(sphere_zero_radius "sphere collider: radius 0 m must be finite and > 0" run ${TW_CLI_BAR} --sphere 0,0,-1,0,0.5)
tw_cli_fails(floor_negative_friction "friction -1 must be finite and >= 0" run ${TW_CLI_BAR} --floor -0.2,-1)
tw_cli_fails(box_missing_value "--box" run ${TW_CLI_BAR} --box 0,0,0,1,1)

# bone cores and embedded render surfaces (Mueller's bunny)
tw_cli_fails(bone_spin_without_core "--bone-spin needs --bone-core DEPTH" run ${TW_CLI_BAR} --bone-spin y,90)
tw_cli_fails(bone_spin_bad_axis "--bone-spin w,90: must be AXIS,DEG_PER_S with AXIS x, y or z" run ${TW_CLI_BAR} --bone-core 0.01 --bone-spin w,90)
tw_cli_fails(bone_core_too_deep "--bone-core 5:" run ${TW_CLI_BAR} --bone-core 5)
tw_cli_fails(render_surface_missing "--render-surface .*nope.obj" run ${TW_CLI_BAR} --render-surface ${TW_CLI_TMP}/nope.obj)
add_test(NAME cli.bunny_bone_core_render_surface
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_ok.sh "^render surface .*: 35947 vertices"
                 --and "^bone core: 440 of 6139 vertices" --and "^2 steps to"
                 $<TARGET_FILE:tetwarp> run --mesh ${TW_CLI_MESHES}/bunny_closed_3485v.tet.node
                 --bone-core 0.01 --bone-spin y,90 --render-surface ${TW_CLI_MESHES}/bunny_stanford_original_69k.obj
                 --gravity 0,0,0 --steps 2)
set_tests_properties(cli.bunny_bone_core_render_surface PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})

# the model pushed past what it represents: warned, not silent
tw_cli_prints(run_near_incompressible_warns "warning: Poisson ratio 0.4999: linear tetrahedra lock near incompressibility"
              run ${TW_CLI_BAR} --nu 0.4999 --steps 1)
tw_cli_prints(run_huge_step_warns "warning: step 1 .*times the body's size; a step this large is not resolved"
              run --dt 10 --steps 1) # the default 20x2x2 bar: +90 % volume in that step
tw_cli_exits(threads_out_of_range 2 "--threads 2147483647: must be from 0 \\(all threads\\) to 1024"
             run ${TW_CLI_BAR} --threads 2147483647 --steps 1)

# the tool (--tool, cli_tool.c): a sphere pressed onto the free end's top edge, the
# force on it in the summary; bad tool options
tw_cli_prints(run_tool_sphere "^tool: force at the end \\([^)]*\\) N, at most [1-9]"
              run ${TW_CLI_BAR} --gravity 0,0,0 --tool sphere:0.06 --tool-path 1,0.05,0.16:1,0.05,0.12:0.05 --steps 10)
tw_cli_exits(tool_needs_position 2 "--tool needs a position" run ${TW_CLI_BAR} --tool sphere:0.1)
tw_cli_exits(tool_bad_shape 2 "must be sphere:R or capsule:R:HX,HY,HZ" run ${TW_CLI_BAR} --tool cube:1 --tool-at 0,0,0)
tw_cli_exits(tool_path_bad_line 2 "tw_test.h:1: expected 't x y z'" run ${TW_CLI_BAR} --tool sphere:0.1
             --tool-path ${CMAKE_CURRENT_SOURCE_DIR}/tw_test.h)
tw_cli_writes_csv(run_tool_model_csv ${TW_CLI_TMP}/tool_model.csv 11
                  "step,time,volume,kinetic_energy,elastic_energy,gravity_energy,cg_iterations,residual,step_ms,probe_ux,probe_uy,probe_uz,tool_x,tool_y,tool_z,tool_fx,tool_fy,tool_fz,tool_kxx,tool_kxy,tool_kxz,tool_kyx,tool_kyy,tool_kyz,tool_kzx,tool_kzy,tool_kzz"
                  run ${TW_CLI_BAR} --gravity 0,0,0 --tool sphere:0.06 --tool-path 1,0.05,0.16:1,0.05,0.12:0.05
                  --tool-model --steps 10 --csv ${TW_CLI_TMP}/tool_model.csv)
tw_cli_exits(tool_model_needs_tool 2 "--tool-model need --tool" run ${TW_CLI_BAR} --tool-model)
tw_cli_exits(tool_model_not_with_scene 2 "--tool-model: not with --scene" run --scene bunny-block --tool sphere:0.02
             --tool-at 0,0.5,0 --tool-model)
tw_cli_prints(run_tool_keyframes "^tool: force at the end \\([^)]*\\) N, at most [1-9]"
              run ${TW_CLI_BAR} --gravity 0,0,0 --tool capsule:0.06:0,0.02,0 --tool-path ${CMAKE_CURRENT_SOURCE_DIR}/tool_path.txt
              --tool-osc 0,0,0.002:5 --steps 10)

# ---- the adaptive tetra tree (run --tree-levels)
tw_cli_writes_csv(run_tree_csv ${TW_CLI_TMP}/tree.csv 6
  "step,time,active_tets,free_vertices,hanging_vertices,refined,coarsened,total_energy,cg_iterations,residual,step_ms,probe_ux,probe_uy,probe_uz"
  run ${TW_CLI_BAR} --tree-levels 2 --steps 5 --csv ${TW_CLI_TMP}/tree.csv)
tw_cli_prints(run_tree_adapt_off "active tets mean 192.0 .min 192, max 192, finest 192"
  run ${TW_CLI_BAR} --tree-levels 2 --adapt off --steps 3)
tw_cli_exits(run_tree_levels_range 2 "--tree-levels 9: must be 1 to 8" run --tree-levels 9)
tw_cli_exits(run_tree_adapt_value 2 "--adapt 'maybe'" run --tree-levels 2 --adapt maybe)
add_test(NAME cli.run_tree_frames
         COMMAND sh -c "rm -rf '${TW_CLI_TMP}/tree_frames' && \"$0\" \"$@\" > /dev/null && test -s '${TW_CLI_TMP}/tree_frames/frame_000002.obj' || { echo 'FAIL: no frame_000002.obj'; exit 1; }"
                 $<TARGET_FILE:tetwarp> run ${TW_CLI_BAR} --tree-levels 2 --steps 2 --obj-every 1
                 --obj-dir ${TW_CLI_TMP}/tree_frames)
set_tests_properties(cli.run_tree_frames PROPERTIES TIMEOUT 120 ENVIRONMENT ${TW_CLI_ENV})

# ---- the multiresolution (run --multires): the field file has a row per
# finest vertex (liver_mr1: 705) a frame
tw_cli_writes_csv(run_multires_field_csv ${TW_CLI_TMP}/mr_field.csv 1411 "frame,vertex,level,x,y,z"
  run --multires 2 --levels ${TW_CLI_MESHES}/liver_mr0.node,${TW_CLI_MESHES}/liver_mr1.node --frames 2
  --field-csv ${TW_CLI_TMP}/mr_field.csv)

# ---- the hierarchical basis (run --hier-basis)
tw_cli_writes_csv(run_hier_basis_csv ${TW_CLI_TMP}/hb.csv 6
  "step,time,cg_iterations,newton_iterations,residual,step_ms,kinetic_energy,elastic_energy,gravity_energy,probe_ux,probe_uy,probe_uz,ref_step_ms,ref_cg_iterations,ref_probe_ux,ref_probe_uy,ref_probe_uz,err_probe,err_max"
  run ${TW_CLI_BAR} --hier-basis 2 --steps 5 --reference green --csv ${TW_CLI_TMP}/hb.csv)
tw_cli_prints(run_hier_basis_levels "2 levels: 20 vertices/24 tets 81 vertices/192 tets; 9 pinned, 9 loaded"
  run ${TW_CLI_BAR} --hier-basis 2 --steps 2 --fix x<0.01 --load x>0.99 --load-force 0,0,-1)
tw_cli_exits(run_hier_basis_range 2 "--hier-basis 9: must be 1..5" run --hier-basis 9)
tw_cli_exits(run_hier_basis_load 2 "--load x>5 selects no vertex" run ${TW_CLI_BAR} --hier-basis 2 --load x>5)

# ---- --scene: a demo scene of one world runs; a scene of several worlds is refused
tw_cli_prints(run_scene_stack "scene stack \\(3 bodies\\): 375 vertices" run --scene stack --steps 3
              --data ${TW_DATA_DIR})
tw_cli_exits(run_scene_several_worlds 1 "--scene bars has 3 separate worlds" run --scene bars --steps 1
             --data ${TW_DATA_DIR})
tw_cli_exits(run_scene_unknown 1 "unknown scene" run --scene nope --steps 1)
