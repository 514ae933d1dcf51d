# Cases for tetwarp-view (interop/), included from tests/CMakeLists.txt when
# the viewer is built. The scenes themselves are tested without OpenGL in
# every build (tests/test_scenes.c).
#
# Each rendering case renders frames headless into tests/tmp/viewer/NAME and
# checks them with png_check. The viewer.NAME cases run with the display
# when there is one (Xvfb, started by .ci/run), else through EGL
# (interop/viewer_test.sh); the viewer.egl_NAME cases always run with
# DISPLAY unset, through EGL (Mesa's surfaceless llvmpipe, or a GPU's EGL
# device). Without a display and without any EGL installed they exit 77,
# "skipped" (interop/egl_test.sh).
function(tw_viewer_tests)
  # a case's time limit: its own, or TW_TEST_TIMEOUT when that is shorter
  set(t300 300)
  set(t120 120)
  if(TW_TEST_TIMEOUT LESS 300)
    set(t300 ${TW_TEST_TIMEOUT})
  endif()
  if(TW_TEST_TIMEOUT LESS 120)
    set(t120 ${TW_TEST_TIMEOUT})
  endif()
  set(view $<TARGET_FILE:tetwarp-view>)
  set(check $<TARGET_FILE:png_check>)
  set(wrap sh ${PROJECT_SOURCE_DIR}/interop/viewer_test.sh)
  set(egl sh ${PROJECT_SOURCE_DIR}/interop/egl_test.sh)
  set(tmp ${PROJECT_BINARY_DIR}/tests/tmp/viewer)
  # Mesa and X allocate for the life of the process: no leak check on the viewer
  set(env OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE ASAN_OPTIONS=detect_leaks=0)
  file(MAKE_DIRECTORY ${tmp})

  # viewer.scene_NAME: the scene renders headless and the last frame is not blank
  foreach(scene bars tube bunny dane cube stack)
    set(dir ${tmp}/${scene})
    add_test(NAME viewer.scene_${scene}
             COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene ${scene} --headless --frames 3 --out '${dir}' && \"$1\" '${dir}/frame_00002.png' --not-blank 500"
                     ${view} ${check})
    set_tests_properties(viewer.scene_${scene} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${t300} ENVIRONMENT "${env}")
  endforeach()

  # bars, 2 s of gravity (61 frames at 30 fps): the tips lie lower in the frame ...
  set(dir ${tmp}/bars_2s_lower)
  add_test(NAME viewer.bars_sag_lower
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene bars --headless --frames 61 --out '${dir}' && \"$1\" '${dir}/frame_00000.png' '${dir}/frame_00060.png' --lower-centroid 10"
                   ${view} ${check})
  # ... and the linear (red) bar's silhouette is larger than the warped (blue) one's
  set(dir ${tmp}/bars_2s_colors)
  add_test(NAME viewer.bars_linear_larger
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene bars --headless --frames 61 --out '${dir}' && \"$1\" '${dir}/frame_00060.png' --more red blue"
                   ${view} ${check})
  # the tube falls: lower in the frame after 1 s than at start
  set(dir ${tmp}/tube_1s)
  add_test(NAME viewer.tube_falls
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene tube --headless --frames 31 --out '${dir}' && \"$1\" '${dir}/frame_00000.png' '${dir}/frame_00030.png' --lower-centroid 5"
                   ${view} ${check})
  set_tests_properties(viewer.bars_sag_lower viewer.bars_linear_larger viewer.tube_falls PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT ${t300} ENVIRONMENT "${env}")

  # without any display, through EGL: --gl egl says EGL only, and the default
  # (EGL first, then GLX) must pick EGL when there is no display
  set(dir ${tmp}/egl_bars)
  add_test(NAME viewer.egl_scene_bars
           COMMAND ${egl} sh -c "rm -rf '${dir}' && \"$0\" --scene bars --headless --gl egl --frames 3 --out '${dir}' | grep 'GL context: EGL' && \"$1\" '${dir}/frame_00002.png' --not-blank 500"
                   ${view} ${check})
  set(dir ${tmp}/egl_bars_2s)
  add_test(NAME viewer.egl_bars_sag_lower
           COMMAND ${egl} sh -c "rm -rf '${dir}' && \"$0\" --scene bars --headless --frames 61 --out '${dir}' | grep 'GL context: EGL' && \"$1\" '${dir}/frame_00000.png' '${dir}/frame_00060.png' --lower-centroid 10"
                   ${view} ${check})
  set(dir ${tmp}/egl_bunny)
  add_test(NAME viewer.egl_scene_bunny
           COMMAND ${egl} sh -c "rm -rf '${dir}' && \"$0\" --scene bunny --headless --frames 3 --out '${dir}' | grep 'GL context: EGL' && \"$1\" '${dir}/frame_00002.png' --not-blank 500"
                   ${view} ${check})
  # the bunny on the shipped TetGen mesh (--bunny-mesh tetgen) instead of the lattice
  set(dir ${tmp}/egl_bunny_tetgen)
  add_test(NAME viewer.egl_scene_bunny_tetgen
           COMMAND ${egl} sh -c "rm -rf '${dir}' && \"$0\" --scene bunny --bunny-mesh tetgen --headless --frames 2 --out '${dir}' | grep '27297 tets' && \"$1\" '${dir}/frame_00001.png' --not-blank 500"
                   ${view} ${check})
  set_tests_properties(viewer.egl_scene_bars viewer.egl_bars_sag_lower viewer.egl_scene_bunny viewer.egl_scene_bunny_tetgen PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT ${t300} ENVIRONMENT "${env}")

  # headless: --core-angle holds the dane's core turned, through EGL without a display
  set(dir ${tmp}/egl_dane_core)
  add_test(NAME viewer.egl_dane_core_angle
           COMMAND ${egl} sh -c "rm -rf '${dir}' && \"$0\" --scene dane --headless --core-angle 40 --frames 16 --out '${dir}' | grep 'bone core held at 40 degrees' && \"$1\" '${dir}/frame_00015.png' --not-blank 500"
                   ${view} ${check})
  set_tests_properties(viewer.egl_dane_core_angle PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${t300} ENVIRONMENT "${env}")
  add_test(NAME viewer.core_angle_no_core
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/expect_fail.sh "--core-angle: bars has no bone core" ${view} --scene bars --headless --core-angle 30)

  # without --scene the camera's up axis is the one most opposite to gravity:
  # a bar along x, pinned at x = 0, under gravity -y is seen with y up and
  # sags down the frame (about 39 rows; the old z-up camera saw it bend
  # sideways, 22 rows lower)
  set(ok sh ${PROJECT_SOURCE_DIR}/tests/expect_ok.sh)
  set(bar --bar 1,0.1,0.1,4,1,1)
  set(dir ${tmp}/up_y)
  add_test(NAME viewer.up_follows_gravity
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --bar 1,0.1,0.1,10,2,2 --gravity 0,-9.81,0 --E 1e6 --headless --frames 31 --out '${dir}' | grep '^up: y (opposite to gravity)$' && \"$1\" '${dir}/frame_00000.png' '${dir}/frame_00030.png' --lower-centroid 30"
                   ${view} ${check})
  add_test(NAME viewer.up_negative_axis
           COMMAND ${wrap} ${ok} "^up: -x \\(opposite to gravity\\)$" ${view} ${bar} --gravity 9.81,0,0 --headless --frames 1 --out ${tmp}/up_minus_x)
  add_test(NAME viewer.up_option
           COMMAND ${wrap} ${ok} "^up: y \\(--up\\)$" ${view} ${bar} --up y --headless --frames 1 --out ${tmp}/up_option)
  add_test(NAME viewer.up_scene
           COMMAND ${wrap} ${ok} "^up: z \\(the scene's\\)$" ${view} --scene bars --headless --frames 1 --out ${tmp}/up_scene)
  # headless progress, caught through a pipe (so it is flushed): every frame
  # with --progress 0, within a frame (step 1 of frame 2) with a short interval
  add_test(NAME viewer.progress_every_frame
           COMMAND ${wrap} ${ok} "^frame 2 of 3, step 3 of 6, [0-9.e+]+ steps/s, eta [0-9]+ s$"
                   --and "^frame 3 of 3, step 6 of 6, [0-9.e+]+ steps/s, eta 0 s$"
                   ${view} ${bar} --headless --frames 3 --progress 0 --out ${tmp}/progress_frames)
  add_test(NAME viewer.progress_within_frame
           COMMAND ${wrap} ${ok} "^frame 2 of 3, step 1 of 6, [0-9.e+]+ steps/s, eta [0-9]+ s$"
                   ${view} ${bar} --headless --frames 3 --progress 1e-9 --out ${tmp}/progress_steps)
  set_tests_properties(viewer.up_follows_gravity viewer.up_negative_axis viewer.up_option viewer.up_scene
                       viewer.progress_every_frame viewer.progress_within_frame PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT ${t120} ENVIRONMENT "${env}")

  # bad input: clear messages, clean non-zero exits (tests/expect_fail.sh)
  set(fails sh ${PROJECT_SOURCE_DIR}/tests/expect_fail.sh)
  file(WRITE ${tmp}/far.obj "v 0 0 0\nv 1 0 0\nv 5 5 5\nf 1 2 3\n")
  add_test(NAME viewer.missing_mesh
           COMMAND ${fails} "cannot load --mesh: .*missing\\.node: cannot open" ${view} --mesh ${tmp}/missing.node --headless)
  add_test(NAME viewer.missing_scene_mesh
           COMMAND ${fails} "bunny: .*bunny_closed_3485v\\.off: cannot open" ${view} --scene bunny --data ${tmp}/nowhere --headless)
  add_test(NAME viewer.bad_bunny_mesh
           COMMAND ${fails} "--bunny-mesh 'octree': choose lattice" ${view} --scene bunny --bunny-mesh octree --headless)
  add_test(NAME viewer.render_surface_not_embeddable
           COMMAND ${fails} "render-surface .*far\\.obj cannot be embedded in the tets: surface vertex 2" ${view} ${bar} --render-surface ${tmp}/far.obj --headless)
  add_test(NAME viewer.bad_up
           COMMAND ${fails} "--up 'w': expected x, y or z" ${view} ${bar} --up w --headless)
  add_test(NAME viewer.unknown_scene
           COMMAND ${fails} "unknown scene \\(choose bars, tube, bunny, dane, cube, bunny-block, stack, dane-floor, tree-box, tree-bunny, tree-armadillo, tree-liver or mr-liver\\)" ${view} --scene zoo --headless)
  # the window without a display; headless with neither EGL (no EGL driver
  # for glvnd) nor a display; GLX forced without a display
  add_test(NAME viewer.no_display
           COMMAND ${CMAKE_COMMAND} -E env --unset=DISPLAY --unset=WAYLAND_DISPLAY
                   ${fails} "no X display \\(DISPLAY unset\\) for the window: set DISPLAY or run under Xvfb" ${view} ${bar})
  add_test(NAME viewer.no_egl_no_display
           COMMAND ${CMAKE_COMMAND} -E env --unset=DISPLAY --unset=WAYLAND_DISPLAY __EGL_VENDOR_LIBRARY_FILENAMES=${tmp}/no_such_vendor.json
                   ${fails} "no OpenGL 3\\.3 core context for --headless: EGL gave none .*and there is no X display for a hidden window" ${view} ${bar} --headless --out ${tmp}/no_egl)
  add_test(NAME viewer.glx_no_display
           COMMAND ${CMAKE_COMMAND} -E env --unset=DISPLAY --unset=WAYLAND_DISPLAY
                   ${fails} "--gl glx: no X display \\(DISPLAY unset\\) for the hidden window: run under Xvfb" ${view} ${bar} --headless --gl glx --out ${tmp}/glx)
  # EGL's OpenGL below 3.3 and no display (Mesa told to offer 3.0; skipped
  # where glvnd's EGL is another vendor's, e.g. NVIDIA's, which ignores that)
  add_test(NAME viewer.egl_gl_too_old
           COMMAND ${egl} --mesa-only ${CMAKE_COMMAND} -E env MESA_GL_VERSION_OVERRIDE=3.0
                   ${fails} "EGL gave none \\(.*no OpenGL 3\\.3 core context .*offers OpenGL 3\\.0" ${view} ${bar} --headless --frames 1 --out ${tmp}/egl_old)
  # a display whose OpenGL is below 3.3 (Mesa told to offer 3.0)
  add_test(NAME viewer.gl_too_old
           COMMAND ${CMAKE_COMMAND} -E env MESA_GL_VERSION_OVERRIDE=3.0
                   ${wrap} --need-display ${fails} "OpenGL 3.3 core profile is not available: this display offers OpenGL 3\\.0" ${view} ${bar} --headless --frames 1 --out ${tmp}/old)
  # exit 0 and both lines of the help (tests/expect_ok.sh checks the status too)
  add_test(NAME viewer.help COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_ok.sh "--headless" --and "space  pause" ${view} --help)
  set_tests_properties(viewer.missing_mesh viewer.missing_scene_mesh viewer.bad_bunny_mesh viewer.render_surface_not_embeddable viewer.bad_up
                       viewer.unknown_scene viewer.no_display viewer.no_egl_no_display viewer.glx_no_display
                       viewer.egl_gl_too_old viewer.gl_too_old viewer.help viewer.core_angle_no_core PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT ${t120} ENVIRONMENT "${env}")

  # CUDA-GL interop (interop/cuda_gl.h), GPU only, skipped (77) where no CUDA
  # device can be used: the bars scene on the CUDA backend drawn through
  # interop and through host upload gives the same images, and drawing through
  # interop copies no vertex data to the host (interop/interop_test.sh)
  set(itest sh ${PROJECT_SOURCE_DIR}/interop/interop_test.sh)
  add_test(NAME viewer.interop_same_image COMMAND ${itest} same ${view} ${check} ${tmp}/interop_same)
  add_test(NAME viewer.interop_no_d2h COMMAND ${itest} no-d2h ${view} ${check} ${tmp}/interop_no_d2h)
  # on any machine: forced interop where it cannot be had is a clean error;
  # auto on the CPU backend says host upload
  add_test(NAME viewer.upload_interop_unavailable
           COMMAND ${wrap} ${fails} "--upload interop: linear: (the world runs on the cpu backend|this build has no CUDA)"
                   ${view} --scene bars --headless --frames 1 --upload interop --out ${tmp}/upload_forced)
  set(dir ${tmp}/upload_auto)
  add_test(NAME viewer.upload_auto_cpu_is_host
           COMMAND ${wrap} sh -c "\"$0\" --scene bars --headless --frames 2 --out '${dir}' | grep 'per frame, host upload'" ${view})
  set_tests_properties(viewer.interop_same_image viewer.interop_no_d2h viewer.upload_interop_unavailable
                       viewer.upload_auto_cpu_is_host PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT ${t300} ENVIRONMENT "${env}")

  # the adaptive tetra tree's scenes (Imai et al. 2013; demos/tree_scenes.c):
  # --colors levels paints the front's level at each vertex (0 blue, 1 green,
  # 2 red). The box starts on its base (blue) and refines toward the wall
  # (red) within 1 s; the bunny starts on its base and refines its soft body
  # to level 1 (green). The box's own colour is blue: without --colors levels
  # no red appears, so the red comes from the levels.
  set(dir ${tmp}/tree_box_levels)
  add_test(NAME viewer.tree_box_levels
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene tree-box --headless --colors levels --frames 11 --out '${dir}' && \"$1\" '${dir}/frame_00000.png' --more blue red && \"$1\" '${dir}/frame_00010.png' --more red blue"
                   ${view} ${check})
  set(dir ${tmp}/tree_box_body)
  add_test(NAME viewer.tree_box_body_colour
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene tree-box --headless --frames 11 --out '${dir}' && \"$1\" '${dir}/frame_00010.png' --more blue red"
                   ${view} ${check})
  set(dir ${tmp}/tree_bunny_levels)
  add_test(NAME viewer.tree_bunny_levels
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene tree-bunny --headless --colors levels --frames 11 --out '${dir}' && \"$1\" '${dir}/frame_00000.png' --more blue green && \"$1\" '${dir}/frame_00010.png' --more green blue"
                   ${view} ${check})
  # --colors stiffness: the graded bunny's stiff feet are red (its own colour
  # is a beige with neither red nor blue hue)
  set(dir ${tmp}/tree_bunny_stiffness)
  add_test(NAME viewer.tree_bunny_stiffness
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene tree-bunny --headless --colors stiffness --frames 1 --out '${dir}' && \"$1\" '${dir}/frame_00000.png' --more red blue"
                   ${view} ${check})
  # the multiresolution liver (Debunne et al. 2001; demos/mr_scene.c) starts
  # on its coarsest level: with --colors levels the liver is blue (its own
  # colour is red) beside the grey tool
  set(dir ${tmp}/mr_liver_levels)
  add_test(NAME viewer.mr_liver_levels
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene mr-liver --headless --colors levels --frames 1 --out '${dir}' | grep 'mr-liver: 3 levels (181, 705, 2207 nodes)' && \"$1\" '${dir}/frame_00000.png' --more blue red"
                   ${view} ${check})
  set(dir ${tmp}/mr_liver_body)
  add_test(NAME viewer.mr_liver_body_colour
           COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene mr-liver --headless --frames 2 --out '${dir}' && \"$1\" '${dir}/frame_00001.png' --more red blue"
                   ${view} ${check})
  add_test(NAME viewer.bad_colors
           COMMAND ${fails} "--colors 'rainbow': unknown body, levels or stiffness" ${view} --scene tree-box --headless --colors rainbow)
  set_tests_properties(viewer.tree_box_levels viewer.tree_box_body_colour viewer.tree_bunny_levels viewer.tree_bunny_stiffness
                       viewer.mr_liver_levels viewer.mr_liver_body_colour viewer.bad_colors PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${t300} ENVIRONMENT "${env}")

endfunction()
tw_viewer_tests()
