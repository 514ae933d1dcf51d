# Cases for tetwarp-view (interop/) and the papers' scenes (demos/), included
# from tests/CMakeLists.txt. The viewer is added after tests/ (at the end of
# the top-level CMakeLists.txt, only when GLFW, libepoxy and libpng are
# found), so the cases are registered by a call deferred to the end of the
# top-level directory, and only when the tetwarp-view target exists.
#
# Rendering cases need an X display (Xvfb, started by .ci/run): without
# DISPLAY they exit 77 and ctest reports them skipped. Each renders frames
# headless into tests/tmp/viewer/NAME and checks them with png_check.
function(tw_viewer_tests)
  if(NOT TARGET tetwarp-view)
    return()
  endif()
  set(view $<TARGET_FILE:tetwarp-view>)
  set(check $<TARGET_FILE:png_check>)
  set(wrap sh ${PROJECT_SOURCE_DIR}/interop/viewer_test.sh)
  set(tmp ${PROJECT_BINARY_DIR}/tests/tmp/viewer)
  # Mesa and X allocate for the life of the process: no leak check on the viewer
  set(env OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE ASAN_OPTIONS=detect_leaks=0)
  file(MAKE_DIRECTORY ${tmp})

  # viewer.scene_NAME: the scene renders headless and the last frame is not blank
  foreach(scene bars tube bunny dane cube)
    set(dir ${tmp}/${scene})
    add_test(NAME viewer.scene_${scene}
             COMMAND ${wrap} sh -c "rm -rf '${dir}' && \"$0\" --scene ${scene} --headless --frames 3 --out '${dir}' && \"$1\" '${dir}/frame_00002.png' --not-blank 500"
                     ${view} ${check})
    set_tests_properties(viewer.scene_${scene} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "${env}")
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
                       SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "${env}")

  # bad input: clear messages, clean non-zero exits (tests/expect_fail.sh)
  set(fails sh ${PROJECT_SOURCE_DIR}/tests/expect_fail.sh)
  set(bar --bar 1,0.1,0.1,4,1,1)
  file(WRITE ${tmp}/far.obj "v 0 0 0\nv 1 0 0\nv 5 5 5\nf 1 2 3\n")
  add_test(NAME viewer.missing_mesh
           COMMAND ${fails} "cannot load --mesh: .*missing\\.node: cannot open" ${view} --mesh ${tmp}/missing.node --headless)
  add_test(NAME viewer.missing_scene_mesh
           COMMAND ${fails} "bunny: .*bunny_closed_3485v\\.tet\\.node: cannot open" ${view} --scene bunny --shared ${tmp}/nowhere --headless)
  add_test(NAME viewer.render_surface_not_embeddable
           COMMAND ${fails} "render-surface .*far\\.obj cannot be embedded in the tets: surface vertex 2" ${view} ${bar} --render-surface ${tmp}/far.obj --headless)
  add_test(NAME viewer.unknown_scene
           COMMAND ${fails} "unknown scene \\(choose bars, tube, bunny, dane or cube\\)" ${view} --scene zoo --headless)
  add_test(NAME viewer.no_display
           COMMAND ${CMAKE_COMMAND} -E env --unset=DISPLAY --unset=WAYLAND_DISPLAY
                   ${fails} "no X display \\(DISPLAY unset\\): run under Xvfb, e.g. xvfb-run -a tetwarp-view" ${view} ${bar} --headless)
  # a display whose OpenGL is below 3.3 (Mesa told to offer 3.0)
  add_test(NAME viewer.gl_too_old
           COMMAND ${CMAKE_COMMAND} -E env MESA_GL_VERSION_OVERRIDE=3.0
                   ${wrap} ${fails} "OpenGL 3.3 core profile is not available: this display offers OpenGL 3\\.0" ${view} ${bar} --headless --frames 1 --out ${tmp}/old)
  add_test(NAME viewer.help COMMAND ${view} --help)
  set_tests_properties(viewer.help PROPERTIES PASS_REGULAR_EXPRESSION "--headless.*space  pause")
  set_tests_properties(viewer.missing_mesh viewer.missing_scene_mesh viewer.render_surface_not_embeddable
                       viewer.unknown_scene viewer.no_display viewer.gl_too_old viewer.help PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT 120 ENVIRONMENT "${env}")

endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL tw_viewer_tests)
