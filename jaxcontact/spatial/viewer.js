/*
 * The viewer of jaxcontact's trajectory pages (jaxcontact.spatial.view.write_html).
 *
 * Part of jaxcontact, under the project's licence (Apache-2.0). Plain WebGL 1 and no library: the page
 * that inlines it loads nothing from the network.
 *
 * It reads the scene (JSON, <script id="scene-data">): unit meshes placed on bodies (and convex hulls given by
 * their triangles), the bodies' poses per frame, ground planes, pivots and impulse arrows; it draws one frame
 * with Lambert shading from a light above the camera; it plays the frames in real time by their times. For
 * tests: "#frame=K" in the address shows frame K at load ("#frame=K&size=WxH": on a canvas of W × H CSS pixels;
 * "#play": playing), window.showFrame(k) shows frame k, and each drawing writes what it drew into <pre
 * id="state"> as JSON (see the Python module's docstring).
 */
(function () {
  "use strict";

  var scene = JSON.parse(document.getElementById("scene-data").textContent);
  var canvas = document.getElementById("scene");
  var stateBox = document.getElementById("state");
  var slider = document.getElementById("time");
  var playButton = document.getElementById("play");
  var clockText = document.getElementById("clock");
  var speedChoice = document.getElementById("speed");
  var times = scene.t;
  var last = times.length - 1;

  var gl = canvas.getContext("webgl", { preserveDrawingBuffer: true, antialias: true });
  if (!gl) {
    stateBox.textContent = JSON.stringify({ error: "no WebGL" });
    clockText.textContent = "this browser offers no WebGL: the scene cannot be drawn";
    return;
  }

  // ---- 4 × 4 matrices, column-major as WebGL takes them ----------------------------------------------------

  function multiply(a, b) {
    var out = new Array(16);
    for (var c = 0; c < 4; c++) {
      for (var r = 0; r < 4; r++) {
        var s = 0;
        for (var k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
        out[c * 4 + r] = s;
      }
    }
    return out;
  }

  function cross(a, b) {
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  }

  function unit(a) {
    var n = Math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    return [a[0] / n, a[1] / n, a[2] / n];
  }

  // The pose (x, y, z, qw, qx, qy, qz) as a matrix: the rotation of the unit quaternion, then the centre.
  function poseMatrix(p) {
    var w = p[3], x = p[4], y = p[5], z = p[6];
    return [
      1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y), 0,
      2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x), 0,
      2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y), 0,
      p[0], p[1], p[2], 1
    ];
  }

  // The matrix placing the unit arrow (or cylinder) along d from the point a, of cross-section width w.
  function alongMatrix(a, d, width, length) {
    var wv = unit(d);
    var e = Math.abs(wv[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
    var u = unit(cross(e, wv));
    var v = cross(wv, u);
    return [
      u[0] * width, u[1] * width, u[2] * width, 0,
      v[0] * width, v[1] * width, v[2] * width, 0,
      wv[0] * length, wv[1] * length, wv[2] * length, 0,
      a[0], a[1], a[2], 1
    ];
  }

  // The inverse transpose of the model matrix's 3 × 3 block: it carries the normals of scaled meshes.
  function normalMatrix(m) {
    var a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6], i = m[10];
    var A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
    var det = a * A + b * B + c * C;
    // The cofactor matrix / det, column-major (A, B, C: its first row).
    return [
      A / det, -(b * i - c * h) / det, (b * f - c * e) / det,
      B / det, (a * i - c * g) / det, -(a * f - c * d) / det,
      C / det, -(a * h - b * g) / det, (a * e - b * d) / det
    ];
  }

  // The camera: as jaxcontact.spatial.view.camera_matrix computes it.
  var camera = JSON.parse(JSON.stringify(scene.camera));

  function eyePosition() {
    var a = (camera.azimuth * Math.PI) / 180, e = (camera.elevation * Math.PI) / 180, t = camera.target;
    return [
      t[0] + camera.distance * Math.cos(e) * Math.cos(a),
      t[1] + camera.distance * Math.cos(e) * Math.sin(a),
      t[2] + camera.distance * Math.sin(e)
    ];
  }

  function viewProjection(aspect) {
    var eye = eyePosition();
    var f = unit([camera.target[0] - eye[0], camera.target[1] - eye[1], camera.target[2] - eye[2]]);
    var s = unit(cross(f, [0, 0, 1]));
    var u = cross(s, f);
    var dot = function (a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
    var view = [
      s[0], u[0], -f[0], 0,
      s[1], u[1], -f[1], 0,
      s[2], u[2], -f[2], 0,
      -dot(s, eye), -dot(u, eye), dot(f, eye), 1
    ];
    var near = camera.distance / 100, far = camera.distance * 100;
    var fy = 1 / Math.tan(((camera.fov * Math.PI) / 180) / 2);
    var projection = [
      fy / aspect, 0, 0, 0,
      0, fy, 0, 0,
      0, 0, (far + near) / (near - far), -1,
      0, 0, (2 * far * near) / (near - far), 0
    ];
    return multiply(projection, view);
  }

  // ---- shaders ---------------------------------------------------------------------------------------------

  var vertexSource =
    "attribute vec3 aPosition; attribute vec3 aNormal; attribute float aMark;\n" +
    "uniform mat4 uModel; uniform mat4 uViewProjection; uniform mat3 uNormal;\n" +
    "varying vec3 vNormal; varying float vMark;\n" +
    "void main() {\n" +
    "  vNormal = uNormal * aNormal; vMark = aMark;\n" +
    "  gl_Position = uViewProjection * uModel * vec4(aPosition, 1.0);\n" +
    "}\n";
  // Lambert from a light above the camera, two-sided (a plane seen from below is lit as from above).
  var fragmentSource =
    "precision mediump float;\n" +
    "uniform vec3 uColour; uniform vec3 uMarkColour; uniform vec3 uLight;\n" +
    "varying vec3 vNormal; varying float vMark;\n" +
    "void main() {\n" +
    "  float light = 0.45 + 0.55 * abs(dot(normalize(vNormal), uLight));\n" +
    "  gl_FragColor = vec4(mix(uColour, uMarkColour, vMark) * light, 1.0);\n" +
    "}\n";

  function compile(type, source) {
    var shader = gl.createShader(type);
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(shader));
    return shader;
  }

  var program = gl.createProgram();
  gl.attachShader(program, compile(gl.VERTEX_SHADER, vertexSource));
  gl.attachShader(program, compile(gl.FRAGMENT_SHADER, fragmentSource));
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(program));
  gl.useProgram(program);
  var at = {
    position: gl.getAttribLocation(program, "aPosition"),
    normal: gl.getAttribLocation(program, "aNormal"),
    mark: gl.getAttribLocation(program, "aMark"),
    model: gl.getUniformLocation(program, "uModel"),
    viewProjection: gl.getUniformLocation(program, "uViewProjection"),
    normalMatrix: gl.getUniformLocation(program, "uNormal"),
    colour: gl.getUniformLocation(program, "uColour"),
    markColour: gl.getUniformLocation(program, "uMarkColour"),
    light: gl.getUniformLocation(program, "uLight")
  };

  // ---- meshes: positions, normals, marks (1: drawn in the mark colour) and triangles ------------------------

  function Mesh() {
    this.positions = [];
    this.normals = [];
    this.marks = [];
    this.triangles = [];
  }
  Mesh.prototype.vertex = function (p, n, mark) {
    this.positions.push(p[0], p[1], p[2]);
    this.normals.push(n[0], n[1], n[2]);
    this.marks.push(mark);
    return this.marks.length - 1;
  };
  Mesh.prototype.quad = function (a, b, c, d) {
    this.triangles.push(a, b, c, a, c, d);
  };
  // With no triangles listed the vertices are the triangles, three by three (drawn without an index: a hull
  // may have more vertices than 16-bit indices reach).
  Mesh.prototype.upload = function () {
    var buffer = function (target, data) {
      var b = gl.createBuffer();
      gl.bindBuffer(target, b);
      gl.bufferData(target, data, gl.STATIC_DRAW);
      return b;
    };
    var indexed = this.triangles.length > 0;
    this.buffers = {
      position: buffer(gl.ARRAY_BUFFER, new Float32Array(this.positions)),
      normal: buffer(gl.ARRAY_BUFFER, new Float32Array(this.normals)),
      mark: buffer(gl.ARRAY_BUFFER, new Float32Array(this.marks)),
      index: indexed ? buffer(gl.ELEMENT_ARRAY_BUFFER, new Uint16Array(this.triangles)) : null
    };
    this.count = indexed ? this.triangles.length : this.marks.length;
    return this;
  };

  // A unit sphere, one meridian band marked (the body's turning shows).
  function sphereMesh() {
    var m = new Mesh(), rings = 16, sectors = 32;
    for (var i = 0; i <= rings; i++) {
      var lat = Math.PI * (i / rings - 0.5);
      for (var j = 0; j <= sectors; j++) {
        var lon = (2 * Math.PI * j) / sectors;
        var p = [Math.cos(lat) * Math.cos(lon), Math.cos(lat) * Math.sin(lon), Math.sin(lat)];
        m.vertex(p, p, j <= 1 || j === sectors ? 1 : 0);
      }
    }
    for (i = 0; i < rings; i++) {
      for (j = 0; j < sectors; j++) {
        var a = i * (sectors + 1) + j;
        m.quad(a, a + 1, a + sectors + 2, a + sectors + 1);
      }
    }
    return m.upload();
  }

  // The cube [-1, 1]³, four vertices per face (flat normals).
  function boxMesh() {
    var m = new Mesh();
    for (var axis = 0; axis < 3; axis++) {
      for (var side = -1; side <= 1; side += 2) {
        var n = [0, 0, 0];
        n[axis] = side;
        var e1 = [0, 0, 0], e2 = [0, 0, 0];
        e1[(axis + 1) % 3] = 1;
        e2[(axis + 2) % 3] = 1;
        var corner = function (a, b) {
          return [n[0] + a * e1[0] + b * e2[0], n[1] + a * e1[1] + b * e2[1], n[2] + a * e1[2] + b * e2[2]];
        };
        m.quad(m.vertex(corner(-1, -1), n, 0), m.vertex(corner(1, -1), n, 0), m.vertex(corner(1, 1), n, 0),
          m.vertex(corner(-1, 1), n, 0));
      }
    }
    return m.upload();
  }

  // A cylinder of radius 1 along z: a side from z0 to z1 of radius r, closed by discs; one side stripe
  // marked when asked (the body's roll shows). With r1 = 0 it is a cone.
  function addRound(m, z0, z1, r0, r1, marked) {
    var sectors = 32, j, base = m.marks.length;
    var slope = (r0 - r1) / (z1 - z0);
    for (j = 0; j <= sectors; j++) {
      var a = (2 * Math.PI * j) / sectors, c = Math.cos(a), s = Math.sin(a);
      var n = unit([c, s, slope]);
      var mark = marked && (j <= 1 || j === sectors) ? 1 : 0;
      m.vertex([r0 * c, r0 * s, z0], n, mark);
      m.vertex([r1 * c, r1 * s, z1], n, mark);
    }
    for (j = 0; j < sectors; j++) m.quad(base + 2 * j, base + 2 * j + 2, base + 2 * j + 3, base + 2 * j + 1);
    [[z0, r0, -1], [z1, r1, 1]].forEach(function (end) {
      if (end[1] === 0) return;
      var centre = m.vertex([0, 0, end[0]], [0, 0, end[2]], 0);
      for (var k = 0; k <= sectors; k++) {
        var b = (2 * Math.PI * k) / sectors;
        m.vertex([end[1] * Math.cos(b), end[1] * Math.sin(b), end[0]], [0, 0, end[2]], 0);
      }
      for (k = 0; k < sectors; k++) m.triangles.push(centre, centre + 1 + k, centre + 2 + k);
    });
  }

  // A convex hull of the scene: its triangles (9 coordinates each) with one flat normal each (3).
  function hullMesh(entry) {
    var m = new Mesh(), t = entry.triangles, n = entry.normals;
    for (var i = 0; 9 * i < t.length; i++) {
      var normal = [n[3 * i], n[3 * i + 1], n[3 * i + 2]];
      for (var k = 0; k < 3; k++) m.vertex([t[9 * i + 3 * k], t[9 * i + 3 * k + 1], t[9 * i + 3 * k + 2]], normal, 0);
    }
    return m.upload();
  }

  function cylinderMesh() {
    var m = new Mesh();
    addRound(m, -1, 1, 1, 1, true);
    return m.upload();
  }

  // The unit arrow along z from 0 to 1 (shaft of radius 1, head of radius 2.5), scaled per arrow.
  function arrowMesh() {
    var m = new Mesh();
    addRound(m, 0, 0.75, 1, 1, false);
    addRound(m, 0.75, 1, 2.5, 0, false);
    return m.upload();
  }

  // A checkered square origin + a u + b v (0 ≤ a, b ≤ 1).
  function planeMesh(plane) {
    var m = new Mesh(), cells = 12, o = plane.origin, u = plane.u, v = plane.v;
    var point = function (a, b) {
      return [o[0] + a * u[0] + b * v[0], o[1] + a * u[1] + b * v[1], o[2] + a * u[2] + b * v[2]];
    };
    for (var i = 0; i < cells; i++) {
      for (var j = 0; j < cells; j++) {
        var mark = (i + j) % 2, a0 = i / cells, a1 = (i + 1) / cells, b0 = j / cells, b1 = (j + 1) / cells;
        m.quad(m.vertex(point(a0, b0), plane.normal, mark), m.vertex(point(a1, b0), plane.normal, mark),
          m.vertex(point(a1, b1), plane.normal, mark), m.vertex(point(a0, b1), plane.normal, mark));
      }
    }
    return m.upload();
  }

  var meshes = { sphere: sphereMesh(), box: boxMesh(), cylinder: cylinderMesh(), arrow: arrowMesh() };
  var planes = scene.planes.map(planeMesh);
  var shapes = scene.meshes.map(function (s) { return s.mesh === "hull" ? hullMesh(s) : meshes[s.mesh]; });

  function rgb(hex) {
    return [1, 3, 5].map(function (i) { return parseInt(hex.substr(i, 2), 16) / 255; });
  }
  var colours = scene.bodies.map(function (b) { return rgb(b.colour); });
  var MARK = [0.75, 0.1, 0.1], GROUND = [0.86, 0.86, 0.86], GROUND_MARK = [0.74, 0.74, 0.74];
  var DARK = [0.2, 0.2, 0.2], ARROW = [0.02, 0.02, 0.02];

  function drawMesh(mesh, model, colour, markColour) {
    var b = mesh.buffers;
    gl.bindBuffer(gl.ARRAY_BUFFER, b.position);
    gl.vertexAttribPointer(at.position, 3, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, b.normal);
    gl.vertexAttribPointer(at.normal, 3, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, b.mark);
    gl.vertexAttribPointer(at.mark, 1, gl.FLOAT, false, 0, 0);
    gl.uniformMatrix4fv(at.model, false, new Float32Array(model));
    gl.uniformMatrix3fv(at.normalMatrix, false, new Float32Array(normalMatrix(model)));
    gl.uniform3fv(at.colour, colour);
    gl.uniform3fv(at.markColour, markColour || colour);
    if (b.index) {
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, b.index);
      gl.drawElements(gl.TRIANGLES, mesh.count, gl.UNSIGNED_SHORT, 0);
    } else {
      gl.drawArrays(gl.TRIANGLES, 0, mesh.count);
    }
  }
  [at.position, at.normal, at.mark].forEach(function (a) { gl.enableVertexAttribArray(a); });

  var IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

  // ---- one frame -------------------------------------------------------------------------------------------

  var frame = 0, drawings = 0, seen = {}, framesSeen = 0;

  function draw() {
    drawings += 1;
    if (!seen[frame]) { seen[frame] = true; framesSeen += 1; }
    var ratio = window.devicePixelRatio || 1;
    var width = Math.max(1, Math.round(canvas.clientWidth * ratio));
    var height = Math.max(1, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    gl.viewport(0, 0, width, height);
    gl.clearColor(1, 1, 1, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    var vp = viewProjection(width / height);
    gl.uniformMatrix4fv(at.viewProjection, false, new Float32Array(vp));
    var eye = eyePosition();
    var toEye = unit([eye[0] - camera.target[0], eye[1] - camera.target[1], eye[2] - camera.target[2]]);
    gl.uniform3fv(at.light, unit([toEye[0], toEye[1], toEye[2] + 1.5]));

    planes.forEach(function (mesh) { drawMesh(mesh, IDENTITY, GROUND, GROUND_MARK); });
    var poses = scene.poses[frame];
    var bodies = poses.map(poseMatrix);
    scene.meshes.forEach(function (s, i) {
      drawMesh(shapes[i], multiply(bodies[s.body], s.matrix), colours[s.body], MARK);
    });
    var bar = scene.bar;
    scene.pivots.forEach(function (pv) {
      var p = pv.point, c = poses[pv.body];
      drawMesh(meshes.sphere, alongMatrix(p, [0, 0, 1], bar[0], bar[0]), DARK);
      var d = [c[0] - p[0], c[1] - p[1], c[2] - p[2]];
      var length = Math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      if (length > 0) {
        // the cylinder spans z from -1 to 1: centred halfway, of half the length
        var mid = [p[0] + d[0] / 2, p[1] + d[1] / 2, p[2] + d[2] / 2];
        drawMesh(meshes.cylinder, alongMatrix(mid, d, bar[1], length / 2), DARK);
      }
    });
    // The arrows over everything: a body's impulses act at points on its surface, often under it.
    gl.disable(gl.DEPTH_TEST);
    var arrows = scene.arrows[frame];
    arrows.forEach(function (a) {
      var d = [a[3], a[4], a[5]];
      var length = Math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      // thinner when short: a small impulse is a short line, not a disc of the arrow's head
      var width = Math.min(bar[2], 0.2 * length);
      if (length > 0) drawMesh(meshes.arrow, alongMatrix([a[0], a[1], a[2]], d, width, length), ARROW);
    });

    slider.value = String(frame);
    clockText.textContent =
      "t = " + times[frame].toFixed(3) + " s of " + times[last].toFixed(3) + " s (frame " + frame + " of " + last + ")";
    var rect = canvas.getBoundingClientRect();
    stateBox.textContent = JSON.stringify({
      frame: frame,
      row: scene.rows[frame],
      time: times[frame],
      poses: poses,
      arrows: arrows.length,
      playing: playing,
      drawings: drawings,
      framesSeen: framesSeen,
      viewProjection: vp,
      canvas: { left: rect.left + window.scrollX, top: rect.top + window.scrollY, width: rect.width, height: rect.height }
    });
  }

  // ---- playing ---------------------------------------------------------------------------------------------

  var playing = false, clock = times[0], before = null;

  function frameAt(time) {  // the last frame at or before time
    var lo = 0, hi = last;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (times[mid] <= time) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  function showFrame(k) {
    frame = Math.min(last, Math.max(0, Math.round(Number(k)) || 0));
    clock = times[frame];
    draw();
    return frame;
  }
  window.showFrame = showFrame;

  function tick(now) {
    if (!playing) return;
    if (before !== null) clock += ((now - before) / 1000) * Number(speedChoice.value);
    before = now;
    if (clock > times[last]) clock = times[0];  // round again
    frame = frameAt(clock);
    draw();
    window.requestAnimationFrame(tick);
  }

  function setPlaying(on) {
    playing = on && last > 0;
    playButton.textContent = playing ? "pause" : "play";
    before = null;
    if (playing) {
      if (frame === last) clock = times[0];
      window.requestAnimationFrame(tick);
    } else {
      draw();
    }
  }

  playButton.addEventListener("click", function () { setPlaying(!playing); });
  slider.addEventListener("input", function () {
    setPlaying(false);
    showFrame(slider.value);
  });
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "SELECT") return;
    if (e.key === " ") {
      setPlaying(!playing);
      e.preventDefault();
    } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      setPlaying(false);
      showFrame(frame + (e.key === "ArrowRight" ? 1 : -1));
      e.preventDefault();
    }
  });

  // ---- the camera by the mouse -----------------------------------------------------------------------------

  var dragging = null;
  canvas.addEventListener("pointerdown", function (e) {
    dragging = [e.clientX, e.clientY];
    canvas.setPointerCapture(e.pointerId);
    canvas.style.cursor = "grabbing";
  });
  canvas.addEventListener("pointermove", function (e) {
    if (!dragging) return;
    camera.azimuth -= 0.4 * (e.clientX - dragging[0]);
    camera.elevation = Math.max(-89, Math.min(89, camera.elevation + 0.4 * (e.clientY - dragging[1])));
    dragging = [e.clientX, e.clientY];
    if (!playing) draw();
  });
  canvas.addEventListener("pointerup", function () {
    dragging = null;
    canvas.style.cursor = "grab";
  });
  canvas.addEventListener("wheel", function (e) {
    camera.distance *= Math.exp(0.001 * e.deltaY);
    e.preventDefault();
    if (!playing) draw();
  }, { passive: false });
  canvas.addEventListener("dblclick", function () {
    camera = JSON.parse(JSON.stringify(scene.camera));
    if (!playing) draw();
  });
  window.addEventListener("resize", function () { if (!playing) draw(); });

  // ---- the start: the frame the address names (#frame=K), else the first; a canvas of a fixed size in CSS
  // pixels when it names one (#size=WxH: a layout that the window's height does not change); playing at once
  // with #play ---------------------------------------------------------------------------------------------

  function fromAddress() {
    var size = /(?:^#|&)size=(\d+)x(\d+)/.exec(window.location.hash);
    if (size) {
      canvas.style.width = size[1] + "px";
      canvas.style.height = size[2] + "px";
    }
    var found = /(?:^#|&)frame=(\d+)/.exec(window.location.hash);
    showFrame(found ? found[1] : 0);
    if (/(?:^#|&)play(?:&|$)/.test(window.location.hash)) setPlaying(true);
  }
  window.addEventListener("hashchange", fromAddress);
  fromAddress();
})();
