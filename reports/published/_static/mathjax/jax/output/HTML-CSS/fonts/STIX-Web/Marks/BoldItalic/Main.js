/*
 *  /MathJax-v2/jax/output/HTML-CSS/fonts/STIX-Web/Marks/BoldItalic/Main.js
 *
 *  Copyright (c) 2009-2018 The MathJax Consortium
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *      http://www.apache.org/licenses/LICENSE-2.0
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 */

MathJax.OutputJax["HTML-CSS"].FONTDATA.FONTS["STIXMathJax_Marks-bold-italic"]={directory:"Marks/BoldItalic",family:"STIXMathJax_Marks",weight:"bold",style:"italic",testString:"\u00A0\u02B0\u02B1\u02B2\u02B3\u02B4\u02B5\u02B6\u02B7\u02B8\u02BB\u02C0\u02C1\u02DB\u02DD",32:[0,0,250,0,0],160:[0,0,250,0,0],688:[852,-328,380,7,365],689:[841,-329,380,7,365],690:[862,-176,350,24,384],691:[690,-344,389,21,384],692:[690,-344,389,2,365],693:[690,-171,389,2,371],694:[684,-345,390,5,466],695:[690,-331,450,15,467],696:[690,-176,350,11,386],699:[685,-369,333,128,332],704:[690,-240,343,-3,323],705:[690,-240,326,20,364],731:[44,173,333,-40,189],733:[697,-516,333,69,498],736:[684,-190,379,14,423],737:[857,-329,222,2,217],738:[690,-331,280,8,274],739:[690,-335,389,3,387],740:[849,-329,328,9,364],748:[70,167,314,5,309],749:[720,-528,395,5,390],759:[-108,227,333,-74,285],8208:[282,-166,333,-4,273],8209:[282,-166,333,-4,273],8210:[282,-166,500,-40,477],8218:[134,182,333,-5,199],8219:[685,-369,333,128,302],8222:[134,182,500,-57,403],8223:[685,-369,500,92,513],8226:[462,-42,560,70,490],8240:[706,29,1118,80,1068],8241:[706,29,1480,80,1430],8249:[415,-32,333,32,303],8250:[415,-32,333,10,281],8413:[760,254,0,-753,256]};MathJax.Callback.Queue(["initFont",MathJax.OutputJax["HTML-CSS"],"STIXMathJax_Marks-bold-italic"],["loadComplete",MathJax.Ajax,MathJax.OutputJax["HTML-CSS"].fontDir+"/Marks/BoldItalic/Main.js"]);
